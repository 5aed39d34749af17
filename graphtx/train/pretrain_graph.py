"""Stage ``pretrain``: self-supervised pre-training of the graph encoder on unlabelled graphs.

Citation fine-tuning has ~10^3 pairs; unlabelled patent text is plentiful. This stage trains the
encoder on every document of ``--graphs`` and of ``train.pretrain_graphs`` (any graphs directory
that ``graphtx parse`` wrote) with three objectives, weighted and summed per step:

(a) ``views`` -- two sections of one document are two views of one invention. For a document whose
    query graph and candidate graph differ (``query_kind`` = first claim or, without claims, the
    abstract; ``candidate_kind`` = claims + description or abstract + description), the query view
    is an anchor and its own candidate view the positive; every other candidate graph of the batch
    is a negative (in-batch InfoNCE, ``train.temperature``). Abstract-only documents (both views one
    graph) take no part: dropout-only views fail on patents (benchmarks/results/training.md).

(b) ``bm25`` -- weak labels from BM25 (Dehghani et al. 2017; SPAR, Chen et al. 2022). A pseudo-query
    is cut from each batch document: a random contiguous span of its query graph's nodes
    (``pretrain_query_share``) with the edges among them. BM25 (the evaluation's: Lucene variant,
    k1 1.5, b 0.75, English stop words, Snowball stemmer) reads the node text of the span and of every
    document's candidate graph in the pool; the span's top ``pretrain_bm25_candidates`` documents
    join the batch. The teacher distribution over the batch's candidates is
    ``softmax(s / (max s · T))`` with s the BM25 scores and T = ``pretrain_bm25_temperature``
    (scores divided by the query's best score: the same T means the same sharpness for a short
    and a long query); the student is the model's ``softmax(cos / temperature)`` over the same
    candidates; the loss is KL(teacher ‖ student). A query without any BM25 match is left out.

(c) ``teacher`` -- distillation from a peer text embedder (all-MiniLM-L6-v2 or all-mpnet-base-v2, whose
    document vectors ``graphtx teacher`` wrote; ``train.pretrain_teacher``). Each batch document with a
    teacher vector is a query (its query graph); each one's ``pretrain_teacher_neighbours`` nearest pool
    documents by the teacher join the batch's candidates, so the batch holds documents the teacher
    finds related. The teacher distribution over the batch's other documents (never the query's own)
    is ``softmax(cos_teacher / pretrain_teacher_temperature)``; the student's is
    ``softmax(cos / temperature)`` over the same candidates; the loss is KL(teacher ‖ student), a
    listwise distillation of the teacher's document-to-document similarities (RocketQAv2 / listwise
    KD; Margin-MSE is the pairwise form). It teaches what a model trained on a billion sentence pairs
    knows of paraphrase and topic, where BM25 only knows shared words. The softmax weighs the teacher's top: matching
    its cosine margins between every two candidates instead (Margin-MSE, which weighs the whole list alike) made the
    student 0.84x at nDCG@150, three seeds (benchmarks/results/transfer.md, teacher-margins-2k).

Per step (batch = a seeded function of (seed, step))::

    B pool documents ─▶ B spans (b) + their view anchors (a) + T teacher queries (c) + B candidate graphs
      + top-K BM25 candidates per span + top-K teacher neighbours per query ─▶ node dropout
      ─▶ model ─▶ (B + A + T + M, D)
      ─▶ w_views · InfoNCE + w_bm25 · KL(BM25 ‖ student) + w_teacher · KL(peer ‖ student) ─▶ AdamW

With selection queries the stage evaluates ``pretrain_evals`` times (the zero-shot citation
score) and keeps the best weights by ``select_metric``; run directory RUN_DIR/pretrain/ holds
log.jsonl, evals.jsonl, checkpoint.pt (while running), best/ and done.json, as the other stages.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from graphtx.atomic import atomic_write_json, atomic_write_text, replacing
from graphtx.graphs.graph import InventionGraph
from graphtx.hardware import trains_in_bf16
from graphtx.model.batch import GraphBatch, collate
from graphtx.model.io import save_model
from graphtx.progress import progress_bar
from graphtx.text.teacher import load_teacher_vectors
from graphtx.train.augment import node_dropout
from graphtx.train.config import TrainConfig
from graphtx.train.data import GraphStore
from graphtx.train.distributed import bf16_autocast, cpu_threads_beside_gpu, rng_devices
from graphtx.train.loss import contrastive_loss
from graphtx.train.prefetch import batch_workers, prefetched

STAGE = "pretrain"
CHECKPOINT_FILE, LOG_FILE, EVALS_FILE, DONE_FILE, BEST_DIR = (
    "checkpoint.pt",
    "log.jsonl",
    "evals.jsonl",
    "done.json",
    "best",
)


# --- the pieces, pure functions ------------------------------------------------------------


def induced_subgraph(graph: InventionGraph, keep: list[int], source: str) -> InventionGraph:
    """The nodes ``keep`` (ascending indices of ``graph``) with the edges among them, re-indexed; same document id and kind."""
    index = {old: new for new, old in enumerate(keep)}
    edges = [
        (index[s], index[d], t)
        for s, d, t in zip(graph.edge_src, graph.edge_dst, graph.edge_type)
        if s in index and d in index
    ]
    return InventionGraph(
        graph.doc_id,
        graph.kind,
        f"{graph.text_source}:{source}",
        tuple(graph.node_text[i] for i in keep),
        tuple(graph.node_type[i] for i in keep),
        tuple(e[0] for e in edges),
        tuple(e[1] for e in edges),
        tuple(e[2] for e in edges),
    )


def crop_graph(graph: InventionGraph, share_min: float, share_max: float, rng: np.random.Generator) -> InventionGraph:
    """A pseudo-query: a random contiguous span of ``graph``'s nodes (share drawn in [min, max], at least
    one node) with the edges among them, re-indexed; same document id and kind."""
    n = graph.num_nodes
    size = max(1, min(n, round(n * rng.uniform(share_min, share_max))))
    start = int(rng.integers(0, n - size + 1))
    return induced_subgraph(graph, list(range(start, start + size)), "span")


def view_documents(store: GraphStore, doc_ids: list[str], query_kind: str, candidate_kind: str) -> set[str]:
    """Documents with two distinct views (query graph ≠ candidate graph): those objective (a) uses."""
    out = set()
    for d in doc_ids:
        q, c = store.get(d, query_kind), store.get(d, candidate_kind)
        if q is not None and c is not None and q.node_text != c.node_text:
            out.add(d)
    return out


def view_pairs(anchor_docs: list[str], candidate_docs: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """For objective (a): each anchor's positive column (its own document's candidate graph) and the
    (a, m) mask of allowed negatives (every candidate of another document; never its own)."""
    column = {d: j for j, d in enumerate(candidate_docs)}
    missing = [d for d in anchor_docs if d not in column]
    if missing:
        raise ValueError(f"view anchors without their own candidate graph in the batch: {missing[:3]}")
    positive = torch.tensor([column[d] for d in anchor_docs], dtype=torch.long)  # (a,)
    allowed = torch.tensor([[c != d for c in candidate_docs] for d in anchor_docs], dtype=torch.bool).reshape(
        len(anchor_docs), len(candidate_docs)
    )
    return positive, allowed


def soft_targets(scores: torch.Tensor, temperature: float) -> tuple[torch.Tensor, torch.Tensor]:
    """BM25 scores (b, m) → (teacher distribution (b, m), rows with any match (b,) bool).

    Row i is softmax(s_i / (max_j s_ij · T)): rows sum to 1 and keep BM25's order (ties stay ties);
    a row without a positive score is all zeros and marked False."""
    scores = scores.to(torch.float32)
    top = scores.max(1, keepdim=True).values  # (b, 1)
    valid = top.squeeze(1) > 0  # (b,)
    logits = scores / (top.clamp(min=1e-12) * temperature)  # (b, m)
    return torch.softmax(logits, dim=1) * valid.unsqueeze(1), valid


def distill_loss(
    queries: torch.Tensor, candidates: torch.Tensor, targets: torch.Tensor, valid: torch.Tensor, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """KL(teacher ‖ student) summed over valid queries, and their count.

    queries (b, D) and candidates (m, D) L2-normalised; targets (b, m) rows sum to 1; the student is
    softmax(cos / temperature) over the same m candidates (every one allowed)."""
    allowed = torch.ones(int(valid.sum()), len(candidates), dtype=torch.bool, device=candidates.device)  # (v, m)
    return masked_distill_loss(queries[valid], candidates, targets[valid], allowed, temperature)


def teacher_neighbours(vectors: np.ndarray, k: int, chunk: int = 2048) -> np.ndarray:
    """(n, k) row indices of each row's ``k`` nearest other rows by cosine (unit ``vectors`` (n, D)), best first."""
    n = len(vectors)
    k = min(k, n - 1)
    out = np.empty((n, k), dtype=np.int64)
    for lo in range(0, n, chunk):
        sims = vectors[lo : lo + chunk] @ vectors.T  # (c, n)
        sims[np.arange(len(sims)), np.arange(lo, lo + len(sims))] = -np.inf  # never itself
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k else np.empty((len(sims), 0), dtype=np.int64)
        order = np.argsort(-np.take_along_axis(sims, top, 1), axis=1, kind="stable")
        out[lo : lo + len(sims)] = np.take_along_axis(top, order, 1)
    return out


def teacher_targets(
    queries: np.ndarray, candidates: np.ndarray, allowed: np.ndarray, temperature: float
) -> torch.Tensor:
    """The teacher's distribution (t, m) over the allowed candidates: softmax(cos / T), zero where not allowed.

    queries (t, D) and candidates (m, D) unit vectors; allowed (t, m) bool with at least one True per row."""
    logits = torch.from_numpy(queries @ candidates.T).float() / temperature  # (t, m)
    logits = logits.masked_fill(~torch.from_numpy(allowed), float("-inf"))
    return torch.softmax(logits, dim=1)


def masked_distill_loss(
    queries: torch.Tensor, candidates: torch.Tensor, targets: torch.Tensor, allowed: torch.Tensor, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """KL(teacher ‖ student) summed over the queries, and their count; both distributions over ``allowed`` only.

    queries (t, D), candidates (m, D) L2-normalised; targets (t, m) rows sum to 1, zero outside ``allowed`` (t, m)."""
    logits = (queries @ candidates.T / temperature).masked_fill(~allowed, float("-inf"))  # (t, m)
    log_p = F.log_softmax(logits, dim=1).masked_fill(~allowed, 0.0)
    kl = (torch.xlogy(targets, targets) - targets * log_p).sum(1)  # (t,)
    return kl.sum(), torch.tensor(float(len(kl)), device=kl.device)


class PeerTeacher:
    """A peer text embedder's vectors of the pool documents that have one, and each one's nearest neighbours."""

    def __init__(self, directory: str | Path, doc_ids: list[str], neighbours: int):
        if not directory:
            raise ValueError(
                "train.pretrain_teacher_weight > 0 needs a teacher: --teacher DIR or train.pretrain_teacher (a `graphtx teacher` directory)"
            )
        vectors = load_teacher_vectors(directory)
        row = {d: i for i, d in enumerate(vectors.doc_ids)}
        self.doc_ids = [d for d in doc_ids if d in row]
        if len(self.doc_ids) < 2:
            raise ValueError(
                f"train.pretrain_teacher {directory}: fewer than 2 pool documents have a teacher vector "
                "(was it written from the corpora whose graphs pre-training reads?)"
            )
        self.row = {d: i for i, d in enumerate(self.doc_ids)}
        self.vectors = vectors.vectors[[row[d] for d in self.doc_ids]]  # (t, D)
        self.neighbours = teacher_neighbours(self.vectors, neighbours)  # (t, k)
        self.label = vectors.label
        self.missing = len(doc_ids) - len(self.doc_ids)


class Bm25Teacher:
    """BM25 over the pool's candidate-graph node text (what the model itself reads)."""

    def __init__(self, doc_ids: list[str], texts: list[str], k1: float = 1.5, b: float = 0.75):
        from graphtx.text.bm25 import Bm25

        self.doc_ids = list(doc_ids)
        self.column = {d: j for j, d in enumerate(self.doc_ids)}
        self._bm25 = Bm25.build(texts, k1, b)

    def scores(self, queries: list[str]) -> np.ndarray:
        """(queries, pool documents) BM25 scores; a query of stop words only scores 0 everywhere."""
        out = np.zeros((len(queries), len(self.doc_ids)), dtype=np.float32)
        for i, tokens in enumerate(self._bm25.tokens(queries)):
            out[i] = self._bm25.scores_of_tokens(tokens)
        return out


def graph_text(graph: InventionGraph) -> str:
    return " . ".join(graph.node_text)


# --- the stage -------------------------------------------------------------------------------


@dataclass
class PretrainState:
    step: int = 0
    evals: int = 0
    best_score: float = -1.0
    best_recall: float = -1.0
    best_ndcg: float = float("nan")
    best_step: int = -1
    stopped: str = ""


class PretrainPool:
    """The documents of one pre-training run: graphs, which have two views, and the BM25 teacher."""

    def __init__(self, store: GraphStore, cfg: TrainConfig):
        self.store, self.cfg = store, cfg
        self.doc_ids = [d for d in store.doc_ids if store.has(d, cfg.query_kind) and store.has(d, cfg.candidate_kind)]
        if len(self.doc_ids) < 2:
            raise ValueError(
                "stage pretrain needs at least 2 documents with graphs (check --graphs / train.pretrain_graphs)"
            )
        self.two_views = view_documents(store, self.doc_ids, cfg.query_kind, cfg.candidate_kind)
        self.teacher = (
            Bm25Teacher(self.doc_ids, [graph_text(store.get(d, cfg.candidate_kind)) for d in self.doc_ids])
            if cfg.pretrain_bm25_weight > 0
            else None
        )
        self.peer = (
            PeerTeacher(cfg.pretrain_teacher, self.doc_ids, cfg.pretrain_teacher_neighbours)
            if cfg.pretrain_teacher_weight > 0
            else None
        )

    def batch_docs(self, seed: int, step: int) -> list[str]:
        """Batch ``step``: the next ``pretrain_batch_docs`` documents of a seeded per-epoch permutation."""
        per = min(self.cfg.pretrain_batch_docs, len(self.doc_ids))
        per_epoch = len(self.doc_ids) // per
        epoch, k = divmod(step, per_epoch)
        order = np.random.default_rng([seed, 31, epoch]).permutation(len(self.doc_ids))
        return [self.doc_ids[i] for i in order[k * per : (k + 1) * per]]


def pretrain_step_inputs(pool: PretrainPool, docs: list[str], rng: np.random.Generator) -> dict:
    """Graphs and targets of one step (no model involved): spans, view anchors, teacher queries, candidates, targets."""
    cfg, store = pool.cfg, pool.store
    cand_docs = list(docs)
    seen = set(cand_docs)

    def add(other: str) -> None:
        if other not in seen:
            seen.add(other)
            cand_docs.append(other)

    spans, scores = [], None
    if pool.teacher is not None:
        spans = [
            crop_graph(store.get(d, cfg.query_kind), cfg.pretrain_query_min_share, cfg.pretrain_query_max_share, rng)
            for d in docs
        ]
        scores = pool.teacher.scores([graph_text(g) for g in spans])  # (B, pool)
        for d, row in zip(docs, scores):
            order = np.lexsort((np.arange(len(row)), -row))  # best first, ties by pool order
            added = 0
            for j in order[: cfg.pretrain_bm25_candidates + len(docs) + 1]:
                if added == cfg.pretrain_bm25_candidates or row[j] <= 0:
                    break
                other = pool.teacher.doc_ids[j]
                if other == d:
                    continue
                added += 1
                add(other)
    taught = [d for d in docs if d in pool.peer.row] if pool.peer is not None else []
    for d in taught:
        for j in pool.peer.neighbours[pool.peer.row[d]]:
            add(pool.peer.doc_ids[j])
    targets = valid = peer_targets = peer_allowed = None
    if scores is not None:
        columns = [pool.teacher.column[c] for c in cand_docs]
        targets, valid = soft_targets(
            torch.from_numpy(scores[:, columns]), cfg.pretrain_bm25_temperature
        )  # (B, M), (B,)
    if taught:
        has = np.array([c in pool.peer.row for c in cand_docs])  # (M,)
        rows = [pool.peer.row[c] for c in cand_docs if c in pool.peer.row]
        cand_vectors = np.zeros((len(cand_docs), pool.peer.vectors.shape[1]), dtype=np.float32)  # (M, D_teacher)
        cand_vectors[has] = pool.peer.vectors[rows]
        allowed = has[None, :] & (
            np.array(cand_docs)[None, :] != np.array(taught)[:, None]
        )  # (T, M): a vector, not the query itself
        keep = allowed.any(1)  # a query needs one other document with a teacher vector
        taught = [d for d, k in zip(taught, keep) if k]
        if taught:
            peer_allowed = torch.from_numpy(allowed[keep])  # (T, M)
            peer_targets = teacher_targets(
                pool.peer.vectors[[pool.peer.row[d] for d in taught]],
                cand_vectors,
                allowed[keep],
                cfg.pretrain_teacher_temperature,
            )  # (T, M)
    anchors = [d for d in docs if d in pool.two_views] if cfg.pretrain_views_weight > 0 else []
    encode_candidates = bool(spans or anchors or taught)  # no query this step: no candidate graph to encode
    return {
        "spans": spans,
        "anchors": anchors,
        "taught": taught,
        "candidates": cand_docs,
        "targets": targets,
        "valid": valid,
        "peer_targets": peer_targets,
        "peer_allowed": peer_allowed,
        "anchor_graphs": [store.get(d, cfg.query_kind) for d in anchors],
        "taught_graphs": [store.get(d, cfg.query_kind) for d in taught],
        "candidate_graphs": [store.get(d, cfg.candidate_kind) for d in cand_docs] if encode_candidates else [],
    }


@dataclass(frozen=True)
class StepBatch:
    """One step's model inputs, built on the CPU from (seed, step) alone (graphtx/train/prefetch.py builds them ahead).
    The batch's graphs are the spans (S), view anchors (A), teacher queries (T) and candidates (M), in that order."""

    batch: GraphBatch  # S + A + T + M graphs, after node dropout
    spans: int  # S
    anchors: int  # A
    taught: int  # T
    candidates: int  # M (0 when no query needs them)
    view_positive: torch.Tensor | None  # (A,) long, the column of the anchor's own candidate view
    view_allowed: torch.Tensor | None  # (A, M) bool
    targets: torch.Tensor | None  # (S, M) BM25's distribution
    valid: torch.Tensor | None  # (S,) a span with a BM25 match
    peer_targets: torch.Tensor | None  # (T, M) the teacher's distribution
    peer_allowed: torch.Tensor | None  # (T, M)

    @property
    def graphs(self) -> int:  # S + A + T + M
        return self.spans + self.anchors + self.taught + self.candidates


def prepare_step(pool: PretrainPool, tokenizer, max_tokens_per_node: int, seed: int, step: int) -> StepBatch:
    """Step ``step``'s batch: its documents, spans and targets (``pretrain_step_inputs``), collated, node dropout
    applied; everything drawn from generators seeded by (seed, step), so it can be built anywhere, in any order."""
    cfg = pool.cfg
    rng = np.random.default_rng([seed, 900, step])
    inp = pretrain_step_inputs(pool, pool.batch_docs(seed, step), rng)
    graphs = inp["spans"] + inp["anchor_graphs"] + inp["taught_graphs"] + inp["candidate_graphs"]
    gb = collate(graphs, tokenizer, max_tokens_per_node)
    g = torch.Generator().manual_seed(int(rng.integers(2**62)))
    positive = allowed = None
    if inp["anchors"]:
        positive, allowed = view_pairs(inp["anchors"], inp["candidates"])  # (A,), (A, M)
    return StepBatch(
        batch=node_dropout(gb, cfg.node_dropout_max, cfg.node_dropout_half, g),
        spans=len(inp["spans"]),
        anchors=len(inp["anchors"]),
        taught=len(inp["taught"]),
        candidates=len(inp["candidate_graphs"]),
        view_positive=positive,
        view_allowed=allowed,
        targets=inp["targets"],
        valid=inp["valid"],
        peer_targets=inp["peer_targets"],
        peer_allowed=inp["peer_allowed"],
    )


class PretrainTrainer:
    def __init__(
        self,
        model,
        tokenizer,
        pool: PretrainPool,
        evaluator,
        cfg: TrainConfig,
        seed: int,
        out_dir: Path,
        progress: bool | None = None,
        tokenizer_file: Path | None = None,
        device: torch.device | str = "cpu",
    ):
        self.device = torch.device(device)  # the model trains here; batches are built on the CPU and moved
        self.model, self.tokenizer, self.pool, self.evaluator = model.to(self.device), tokenizer, pool, evaluator
        self.cfg, self.seed, self.out_dir, self.progress, self.tokenizer_file = (
            cfg,
            seed,
            Path(out_dir),
            progress,
            tokenizer_file,
        )
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.pretrain_lr, weight_decay=cfg.weight_decay)
        self.state = PretrainState()

    def run(self, stop_after_steps: int = 0) -> PretrainState:
        """Train ``pretrain_steps`` steps, resuming from the checkpoint (every ``checkpoint_every_steps`` steps and every
        evaluation); ``stop_after_steps`` (tests) simulates a kill: the state comes back with ``stopped`` empty."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if (self.out_dir / DONE_FILE).exists():
            self.state = PretrainState(**json.loads((self.out_dir / DONE_FILE).read_text())["state"])
            return self.state
        with torch.random.fork_rng(devices=rng_devices(self.device)), cpu_threads_beside_gpu(self.device):
            torch.manual_seed(self.seed * 1_000 + 900)
            return self._run(stop_after_steps)

    def batch_at(self, step: int) -> StepBatch:
        """Step ``step``'s batch (built on the CPU, in this process or a prefetching worker)."""
        return prepare_step(self.pool, self.tokenizer, self.model.config.max_tokens_per_node, self.seed, step)

    def load_best(self):
        from graphtx.model.io import load_model

        return load_model(self.out_dir / BEST_DIR).model

    def _run(self, stop_after_steps: int) -> PretrainState:
        if (
            not self._load_checkpoint()
        ):  # no step-0 evaluation: the untrained score is the base stage's reference of a --tokens run
            for name in (LOG_FILE, EVALS_FILE):
                (self.out_dir / name).unlink(missing_ok=True)
        cfg, st = self.cfg, self.state  # after the checkpoint: its state
        total = cfg.pretrain_steps
        eval_at = (
            {max(1, round(total * (i + 1) / cfg.pretrain_evals)) for i in range(cfg.pretrain_evals)}
            if self.evaluator
            else set()
        )
        bar = progress_bar(total=total, initial=st.step, desc="train pretrain", unit="step", enabled=self.progress)
        steps_run = 0
        workers = batch_workers(cfg.pretrain_batch_workers, self.device.type)
        with prefetched(self.batch_at, range(st.step, total), workers) as batches:
            while st.step < total:
                t0 = time.perf_counter()
                prepared = next(batches)
                record = self._step(prepared, time.perf_counter() - t0)
                st.step += 1
                steps_run += 1
                bar.update(1)
                bar.set_postfix(loss=f"{record['loss']:.4f}")
                self._append(LOG_FILE, record)
                if st.step in eval_at:
                    self._evaluate()
                if (st.step in eval_at or st.step % cfg.checkpoint_every_steps == 0) and st.step < total:
                    self._save_checkpoint()
                if stop_after_steps and steps_run >= stop_after_steps and st.step < total:
                    bar.close()
                    return st
        bar.close()
        st.stopped = "max steps"
        if not self.evaluator:  # nothing to select by: the last weights
            save_model(self.out_dir / BEST_DIR, self.model, tokenizer=self.tokenizer_file)
            st.best_step = st.step
        summary = {
            "state": asdict(st),
            "best_fingerprint": (self.out_dir / BEST_DIR / "fingerprint.txt").read_text().strip(),
            "documents": len(self.pool.doc_ids),
            "two_view_documents": len(self.pool.two_views),
            "teacher": self.pool.peer.label if self.pool.peer else "",
            "teacher_documents": len(self.pool.peer.doc_ids) if self.pool.peer else 0,
            "precision": "bf16" if trains_in_bf16(self.device.type, self.cfg.amp, on_cpu=True) else "fp32",
        }
        atomic_write_json(self.out_dir / DONE_FILE, summary)
        (self.out_dir / CHECKPOINT_FILE).unlink(missing_ok=True)
        return st

    def _lr(self) -> float:
        cfg, step = self.cfg, self.state.step
        warm = min(1.0, (step + 1) / cfg.warmup_steps) if cfg.warmup_steps else 1.0
        cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, step / max(1, cfg.pretrain_steps))))
        return max(cfg.min_lr, cfg.pretrain_lr * warm * cosine)

    def _step(self, prepared: StepBatch, waited: float) -> dict:
        """One optimiser step on a prepared batch; ``waited``: the seconds spent getting it (building it, in line)."""
        cfg, st, dev = self.cfg, self.state, self.device
        t0 = time.perf_counter()
        self.model.train()
        lr = self._lr()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        gb = prepared.batch.to(dev)
        with bf16_autocast(dev, cfg.amp, on_cpu=True):  # bf16 on a GPU, and on a CPU that has it in hardware
            vectors = self.model(gb).float()  # (S + A + T + M, D)
        s, a, t = prepared.spans, prepared.anchors, prepared.taught
        spans, anchors = vectors[:s], vectors[s : s + a]  # (S, D), (A, D)
        taught, cands = vectors[s + a : s + a + t], vectors[s + a + t :]  # (T, D), (M, D)
        loss = vectors.new_zeros(())
        views = bm25 = peer = float("nan")
        if a:
            positive, allowed = prepared.view_positive.to(dev), prepared.view_allowed.to(dev)  # (A,), (A, M)
            total, denom, _ = contrastive_loss(anchors, cands, positive, allowed, cfg.temperature)
            views_loss = total / denom.clamp(min=1.0)
            loss = loss + cfg.pretrain_views_weight * views_loss
            views = float(views_loss.detach())
        if s and bool(prepared.valid.any()):
            total, denom = distill_loss(spans, cands, prepared.targets.to(dev), prepared.valid.to(dev), cfg.temperature)
            bm25_loss = total / denom.clamp(min=1.0)
            loss = loss + cfg.pretrain_bm25_weight * bm25_loss
            bm25 = float(bm25_loss.detach())
        if t:
            total, denom = masked_distill_loss(
                taught, cands, prepared.peer_targets.to(dev), prepared.peer_allowed.to(dev), cfg.temperature
            )
            peer_loss = total / denom.clamp(min=1.0)
            loss = loss + cfg.pretrain_teacher_weight * peer_loss
            peer = float(peer_loss.detach())
        self.optimizer.zero_grad(set_to_none=True)
        if loss.requires_grad:
            loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(
            self.model.parameters(), cfg.grad_clip if cfg.grad_clip > 0 else float("inf")
        )
        self.optimizer.step()
        loss_value, grad_norm_value = float(loss.detach()), float(grad_norm)  # on a GPU: waits for the step's work
        seconds = waited + time.perf_counter() - t0  # the step's wall time, its batch's wait included
        return {
            "stage": STAGE,
            "step": st.step + 1,
            "lr": lr,
            "loss": loss_value,
            "views_loss": views,
            "bm25_loss": bm25,
            "teacher_loss": peer,
            "teacher_queries": t,
            "view_anchors": a,
            "spans": s,
            "candidates": prepared.candidates,
            "graphs": prepared.graphs,
            "nodes": gb.num_nodes,
            "grad_norm": grad_norm_value,
            "seconds": seconds,
            "batch_seconds": waited,
        }

    def _evaluate(self) -> None:
        if self.evaluator is None:
            return
        st, cfg = self.state, self.cfg
        t0 = time.perf_counter()
        result = self.evaluator(self.model, self.tokenizer)
        score = result.ndcg if cfg.select_metric == "ndcg" else result.recall
        improved = score > st.best_score
        self._append(
            EVALS_FILE,
            {
                "stage": STAGE,
                "step": st.step,
                "k": cfg.eval_k,
                "ndcg_k": cfg.eval_ndcg_k,
                **asdict(result),
                "improved": improved,
                "reference": False,
                "seconds": time.perf_counter() - t0,
            },
        )
        st.evals += 1
        if improved:
            st.best_score, st.best_recall, st.best_ndcg, st.best_step = score, result.recall, result.ndcg, st.step
            save_model(self.out_dir / BEST_DIR, self.model, tokenizer=self.tokenizer_file)

    def _save_checkpoint(self) -> None:
        payload = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "state": asdict(self.state),
            "torch_rng": torch.get_rng_state(),
            "log_lines": _count_lines(self.out_dir / LOG_FILE),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,  # as stage base's
            "eval_lines": _count_lines(self.out_dir / EVALS_FILE),
        }
        with replacing(self.out_dir / CHECKPOINT_FILE) as tmp:  # graphtx/atomic.py: the old or the new checkpoint
            torch.save(payload, tmp)

    def _load_checkpoint(self) -> bool:
        path = self.out_dir / CHECKPOINT_FILE
        if not path.exists():
            return False
        payload = torch.load(path, map_location="cpu", weights_only=False)
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        self.state = PretrainState(**payload["state"])
        torch.set_rng_state(payload["torch_rng"])
        if (
            payload.get("cuda_rng") is not None and torch.cuda.is_available()
        ):  # dropout on the GPU draws from its own generator
            torch.cuda.set_rng_state_all(payload["cuda_rng"])
        for name, keep in ((LOG_FILE, payload["log_lines"]), (EVALS_FILE, payload["eval_lines"])):
            p = self.out_dir / name
            if p.exists():
                atomic_write_text(p, "".join(p.read_text(encoding="utf-8").splitlines(keepends=True)[:keep]))
        return True

    def _append(self, name: str, record: dict) -> None:
        with open(self.out_dir / name, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, allow_nan=True) + "\n")


def _count_lines(path: Path) -> int:
    return sum(1 for _ in open(path, encoding="utf-8")) if path.exists() else 0


def load_pool_store(graphs_dirs: list[str], kinds: set[str]) -> GraphStore:
    """One GraphStore over several graphs directories (a document id seen twice: the first directory wins)."""
    from graphtx.graphs.parse import iter_graphs

    seen: set[tuple[str, str]] = set()

    def graphs():
        for d in graphs_dirs:
            for g in iter_graphs(d):
                if g.kind in kinds and (g.doc_id, g.kind) not in seen:
                    seen.add((g.doc_id, g.kind))
                    yield g

    return GraphStore(graphs())
