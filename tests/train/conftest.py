"""A seeded synthetic corpus with planted citations, small enough to train on in seconds.

12 topics × 8 documents. A document's graphs use feature words of its topic (plus
shared filler words); each document cites two others of its topic. Topic words are
invented, so only training can learn that "quarzite vane" and "quarzite rotor" belong
together: a trained model must beat an untrained one on held-out citations.
"""

from __future__ import annotations

import random

import pytest
import yaml

from graphtx.config import PretrainConfig
from graphtx.corpus.schema import PatentDocument
from graphtx.corpus.store import CorpusWriter, TableWriter
from graphtx.graphs.graph import GRAPH_SCHEMA, InventionGraph
from graphtx.text.pretrain import pretrain

TOPICS = 12
DOCS_PER_TOPIC = 8
STEMS = ["quarz", "velm", "trovan", "plisk", "dorund", "mekal", "sorpin", "glavet", "funor", "brelix", "catum", "yosk"]
PARTS = ["vane", "rotor", "shaft", "plate", "valve", "spring", "housing", "lever"]
FILLER = ["device", "member", "unit", "element", "portion", "surface"]


def _graph(doc_id: str, kind: str, features: list[str]) -> InventionGraph:
    nodes, types, src, dst, etypes = [], [], [], [], []
    for i, f in enumerate(features):
        nodes.append(f)
        types.append("feature")
        if i:
            nodes.append(f"{features[0]} connected to {f}")
            types.append("relation")
            r = len(nodes) - 1
            src += [0, r]
            dst += [r, len(nodes) - 2]
            etypes += ["functional", "functional"]
    return InventionGraph(doc_id, kind, kind, tuple(nodes), tuple(types), tuple(src), tuple(dst), tuple(etypes))


def build_synthetic(root, seed: int = 0) -> dict:
    rng = random.Random(seed)
    docs, graphs, citations = [], [], []
    for t in range(TOPICS):
        words = [f"{STEMS[t]}ite {p}" for p in PARTS]
        ids = [f"T{t:02d}-{j}" for j in range(DOCS_PER_TOPIC)]
        for j, doc_id in enumerate(ids):
            claim = rng.sample(words, 3) + rng.sample(FILLER, 1)
            desc = rng.sample(words, 5) + rng.sample(FILLER, 2)
            text = "A " + ", ".join(claim) + ". " + " and ".join(desc) + "."
            docs.append(
                PatentDocument(
                    doc_id,
                    "test",
                    "-",
                    title=f"{STEMS[t]} machine",
                    abstract=text,
                    ipc=(f"F0{t % 10}B 1/00",),
                    family_id=f"F{t}-{j}",
                    date=f"{2000 + j}-01-01",
                )
            )
            graphs += [
                _graph(doc_id, "first_claim", claim),
                _graph(doc_id, "all_claims", claim + desc[:1]),
                _graph(doc_id, "description", desc),
            ]
            for other in rng.sample([x for x in ids if x != doc_id], 2):
                citations.append((doc_id, other))
    with CorpusWriter(root / "corpus") as w:
        for d in docs:
            w.add_document(d, (), "-", d.id)
    (root / "graphs").mkdir()
    writer = TableWriter(root / "graphs" / "graphs.parquet", GRAPH_SCHEMA, rows_per_group=256)
    for g in graphs:
        writer.add(g.to_row())
    writer.close()
    # the last two documents of each topic are validation queries; the rest train
    valid = [c for c in citations if c[0].endswith(("-6", "-7"))]
    train = [c for c in citations if c not in valid]
    (root / "train.tsv").write_text("citing_id\tcited_id\tcategory\n" + "".join(f"{a}\t{b}\tX\n" for a, b in train))
    (root / "valid.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in valid))
    pretrain(
        [root / "corpus"],
        root / "tokens",
        PretrainConfig(vocab_size=300, dim=16, epochs=2, buckets=5_000),
        seed=0,
        progress=False,
    )
    config = {
        "seed": 0,
        "model": {
            "vocab_size": 300,
            "token_dim": 16,
            "node_dim": 32,
            "heads": 2,
            "layers": 1,
            "ffn_mult": 2,
            "base_dim": 32,
            "reduced_dim": 8,
            "num_experts": 2,
            "dropout": 0.1,
            "attention_dropout": 0.0,
            "embedding_dropout": 0.1,
        },
        "train": {
            "max_nodes_per_batch": 400,
            "max_pairs_per_batch": 24,
            "group_by": "ipc",
            "lr": 0.003,
            "reduced_lr": 0.003,
            "warmup_steps": 2,
            "max_epochs": 6,
            "evals_per_epoch": 1,
            "checkpoint_every_steps": 2,
            "eval_ndcg_k": 20,
            "trivial_share": 0.2,
            "mining": "semihard",
            "pretrain_steps": 30,
            "pretrain_batch_docs": 32,
            "pretrain_evals": 5,
            "pretrain_lr": 0.003,
        },
    }
    (root / "tiny.yaml").write_text(yaml.safe_dump(config))
    return {"train": train, "valid": valid}


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory):
    root = tmp_path_factory.mktemp("synthetic")
    build_synthetic(root)
    return root
