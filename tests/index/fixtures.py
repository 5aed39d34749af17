"""Tiny, spaCy-free fixtures for the index and serve tests: hand-built graphs, a corpus, a model.

``make_graphs`` writes a graphs directory the way ``graphtx parse`` does (graphs.parquet with
GRAPH_SCHEMA + manifest.json naming the corpus), from seeded random feature lists; every
document also carries one rare word of its own ("zorblat17") in its title and first feature,
so BM25 can find it by that word alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from graphtx import integrity
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter, TableWriter
from graphtx.graphs.graph import GRAPH_KINDS, GRAPH_SCHEMA, InventionGraph
from graphtx.graphs.parse import GRAPHS_FILE

FEATURES = (
    "auger housing",
    "chute",
    "frame",
    "handle",
    "snowthrower",
    "battery cell",
    "cooling plate",
    "valve seat",
    "stem",
    "actuator",
    "motor",
    "gear",
    "shaft",
    "bearing",
    "housing",
    "sensor",
    "controller",
    "pump",
    "nozzle",
    "spring",
    "lithium battery",
    "electrode",
    "separator",
    "electrolyte",
    "charging circuit",
    "inverter",
    "wheel",
    "brake",
)
RELATIONS = ("mounted on", "connected to", "configured to drive", "for cooling", "that rotates")
N_DOCS = 120  # documents of the shared ``tiny`` fixture (tests/conftest.py)


def rare_word(i: int) -> str:
    return f"zorblat{i}"


def doc_id(i: int) -> str:
    return f"T-{i:05d}"


def make_graph(i: int, kind: str = "description", seed: int = 0) -> InventionGraph:
    """A random but valid graph for document i: features, part_of edges to the first, one relation node."""
    rng = np.random.default_rng(seed * 100_003 + i)
    n = int(rng.integers(3, 8))
    feats = [f"{rare_word(i)} device"] + [FEATURES[j] for j in rng.choice(len(FEATURES), size=n, replace=False)]
    rel = f"{feats[1]} {RELATIONS[int(rng.integers(len(RELATIONS)))]} {feats[2]}"
    node_text = (*feats, rel)
    node_type = ("feature",) * len(feats) + ("relation",)
    r = len(feats)
    src = [k for k in range(1, len(feats))] + [1, r]
    dst = [0] * (len(feats) - 1) + [r, 2]
    etype = ["part_of"] * (len(feats) - 1) + ["functional", "functional"]
    return InventionGraph(doc_id(i), kind, "claims", node_text, node_type, tuple(src), tuple(dst), tuple(etype))


def make_corpus(root: Path, ids: range) -> Path:
    out = root / "corpus"
    with CorpusWriter(out) as w:
        for i in ids:
            g = make_graph(i)
            claim = f"A {g.node_text[0]} comprising " + ", ".join(g.node_text[1:-1]) + "."
            doc = PatentDocument(
                doc_id(i),
                "test",
                "-",
                title=f"Title {rare_word(i)} {g.node_text[1]}",
                abstract=claim,
                claims=(Claim(1, claim, True),),
                ipc=(f"H01M {i % 7}/00",),
                date=f"20{10 + i % 10}-01-0{1 + i % 9}",
            )
            w.add_document(doc, (), "-", str(i))
    return out


def make_graphs(
    root: Path,
    ids: range,
    name: str = "graphs",
    seed: int = 0,
    corpus: Path | None = None,
    kinds=("description", "first_claim"),
) -> Path:
    out = root / name
    out.mkdir(parents=True, exist_ok=True)
    writer = TableWriter(out / GRAPHS_FILE, GRAPH_SCHEMA, rows_per_group=64)
    for i in ids:
        for kind in kinds:
            writer.add(make_graph(i, kind, seed).to_row())
    writer.close()
    manifest = {
        "corpus": str(corpus) if corpus else "",
        "documents": len(ids),
        "config": {},
        "checksums": integrity.record(out, [GRAPHS_FILE]),
    }
    (out / "manifest.json").write_text(json.dumps(integrity.seal(manifest)) + "\n")  # as `graphtx parse` writes it
    return out


def make_model(root: Path, seed: int = 0, name: str = "model", late_dim: int = 0) -> Path:
    from graphtx.model.config import ModelConfig
    from graphtx.model.encoder import GraphEncoder
    from graphtx.model.io import save_model
    from graphtx.text.bpe import train_bpe

    texts = [" ".join(FEATURES + RELATIONS)] * 3 + [" ".join(rare_word(i) for i in range(400))] * 2
    tokenizer = train_bpe(texts, vocab_size=300, min_frequency=1)
    config = ModelConfig(
        vocab_size=tokenizer.vocab_size,
        token_dim=16,
        node_dim=32,
        heads=2,
        layers=1,
        base_dim=48,
        reduced_dim=0,
        num_experts=2,
        max_tokens_per_node=16,
        late_dim=late_dim,
    )
    model = GraphEncoder(config, seed=seed)
    if late_dim:  # a fresh head weighs query nodes uniformly: make the weights differ
        import torch

        with torch.no_grad():
            model.late.weight.weight.normal_(generator=torch.Generator().manual_seed(seed))
    return save_model(root / name, model, tokenizer=tokenizer)


assert set(GRAPH_KINDS) >= {"description", "first_claim"}
