"""Late-interaction node vectors in the index directory: compact storage, exact re-ranking, explanations.

Legend: m - query nodes, n - document nodes, L - late_dim, c - candidates.

Storage (``index.late_storage``): beside each committed part ``documents/part-XXXXXX.parquet``
a folder ``late/part-XXXXXX/`` holds the part's documents' node vectors (``graphtx.model.late``)
in part row order::

    vectors.npy   (nodes, L) int8 (codes) or float16
    scales.npy    (nodes,)   float16: int8 only, the per-vector scale (v ≈ scale * code, scale = max|v| / 127)
    offsets.npy   (rows + 1,) int64: row r owns nodes offsets[r]:offsets[r + 1]

The folder is written beside and renamed into place *before* its part is committed, so every
committed part has its node vectors (a removed or superseded document's are simply never read).
Bytes per document = nodes x (L + 2) for int8, nodes x 2L for float16 (+ 8 for the offset).

Scoring: the stored vectors are decoded and re-normalised (so similarities are true cosines of
the stored vectors), and for a query (u_i, w_i)

    s(q, d) = sum_i w_i max_j cos(u_i, v_j)                     (graphtx.model.late)

``explain_late`` splits one score into its exact per-query-node terms: weight, best document
node, cosine, contribution; the contributions sum to the score.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from graphtx.graphs.graph import InventionGraph
from graphtx.model.late import late_scores

LATE_DIR = "late"
STORAGES = ("none", "int8", "fp16")


# --- quantisation --------------------------------------------------------------------


def quantize(vectors: np.ndarray, storage: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(n, L) float → (codes (n, L), scales (n,) float16 or None)."""
    vectors = np.asarray(vectors, np.float32)
    if storage == "fp16":
        return vectors.astype(np.float16), None
    if storage != "int8":
        raise ValueError(f"late-interaction storage must be int8 or fp16, got {storage!r}")
    scale = np.abs(vectors).max(axis=1) / 127.0 if len(vectors) else np.zeros(0, np.float32)  # (n,)
    scale = np.maximum(scale, 1e-12).astype(np.float16).astype(np.float32)  # the scale as stored: codes must fit it
    codes = np.clip(np.rint(vectors / scale[:, None]), -127, 127).astype(np.int8)  # (n, L)
    return codes, scale.astype(np.float16)


def dequantize(codes: np.ndarray, scales: np.ndarray | None) -> np.ndarray:
    """Codes → unit-length float32 vectors (n, L) (a zero vector stays zero)."""
    v = codes.astype(np.float32)
    if scales is not None:
        v *= scales.astype(np.float32)[:, None]
    norm = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, norm, out=np.zeros_like(v), where=norm > 0)


def bytes_per_node(late_dim: int, storage: str) -> int:
    return late_dim + 2 if storage == "int8" else 2 * late_dim


# --- scoring -------------------------------------------------------------------------


@dataclass(frozen=True)
class LateTerm:
    query_node: int
    query_text: str
    weight: float  # w_i: the query node's learned weight (the weights sum to 1)
    hit_node: int  # argmax_j cos(u_i, v_j); -1 when the hit has no nodes
    hit_text: str
    similarity: float  # max_j cos(u_i, v_j)
    contribution: float  # weight * similarity: the terms sum to the late score

    def to_json(self) -> dict:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class LateExplanation:
    """The exact decomposition of a hit's late-interaction score (one term per query node)."""

    doc_id: str
    score: float  # the late score; = sum of every term's contribution
    terms: tuple[LateTerm, ...]  # all query nodes, largest contribution first
    rows: int  # terms shown by ``table`` (all are in to_json)
    query_graph: InventionGraph
    hit_graph: InventionGraph
    elements: tuple = ()  # explain.Element of every query feature: the claim chart (similarity: the late cosine)

    @property
    def total(self) -> float:
        return float(sum(t.contribution for t in self.terms))

    @property
    def not_found(self) -> tuple[int, ...]:
        return tuple(e.number for e in self.elements if not e.found)

    def chart(self) -> list[str]:
        from graphtx.index.explain import chart_lines

        return chart_lines(self.elements)

    def to_json(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "kind": "late",
            "score": round(self.score, 6),
            "total": round(self.total, 6),
            "terms": [t.to_json() for t in self.terms],
            "elements": [e.to_json() for e in self.elements],
            "not_found": list(self.not_found),
        }

    def table(self) -> list[str]:
        if not self.terms:
            return ["    (no query nodes)"]
        shown = self.terms[: self.rows]
        qw = max(len(_cut(t.query_text)) for t in shown)
        hw = max(len(_cut(t.hit_text)) for t in shown)
        lines = [f"    {'query feature':<{qw}}  {'best hit feature':<{hw}}  weight    cos  contrib"]
        for t in shown:
            lines.append(
                f"    {_cut(t.query_text):<{qw}}  {_cut(t.hit_text):<{hw}}  {t.weight:.4f}  {t.similarity:5.3f}  {t.contribution:+.4f}"
            )
        rest = self.terms[self.rows :]
        if rest:
            lines.append(f"    ... {len(rest)} more query nodes: {sum(t.contribution for t in rest):+.4f}")
        lines.append(f"    sum of {len(self.terms)} terms = {self.total:.4f} = late score {self.score:.4f}")
        return lines

    def highlights(self) -> tuple[dict[int, float], dict[int, float]]:
        q: dict[int, float] = {}
        h: dict[int, float] = {}
        for e in self.elements:  # the claim chart's found features first (as explain.Explanation)
            if e.found and e.hit_node >= 0:
                q[e.query_node] = h[e.hit_node] = 1.0 if e.found == "words" else min(max(e.similarity, 0.0), 1.0)
        if q:
            return q, h
        for t in self.terms[: self.rows]:
            s = min(max(t.similarity, 0.0), 1.0)
            q[t.query_node] = max(q.get(t.query_node, 0.0), s)
            if t.hit_node >= 0:
                h[t.hit_node] = max(h.get(t.hit_node, 0.0), s)
        return q, h


def explain_late(
    query: InventionGraph,
    u: np.ndarray,
    w: np.ndarray,
    hit: InventionGraph,
    v: np.ndarray,
    rows: int = 8,
    found_similarity: float = 0.9,
) -> LateExplanation:
    """Per query node i: w_i, argmax_j cos(u_i, v_j), the cosine and w_i * cosine; the score is their sum."""
    from graphtx.index.explain import claim_elements

    u, v, w = np.asarray(u, np.float64), np.asarray(v, np.float64), np.asarray(w, np.float64)
    if len(u) == 0:
        return LateExplanation(
            hit.doc_id, 0.0, (), rows, query, hit, claim_elements(query, hit, None, found_similarity)
        )
    elements = claim_elements(query, hit, u @ v.T if len(v) else None, found_similarity)
    if len(v) == 0:
        terms = [LateTerm(i, query.node_text[i], float(w[i]), -1, "", 0.0, 0.0) for i in range(len(u))]
    else:
        sim = u @ v.T  # (m, n)
        best = sim.argmax(axis=1)  # (m,)
        terms = [
            LateTerm(
                i,
                query.node_text[i],
                float(w[i]),
                int(best[i]),
                hit.node_text[int(best[i])],
                float(sim[i, best[i]]),
                float(w[i] * sim[i, best[i]]),
            )
            for i in range(len(u))
        ]
    terms.sort(key=lambda t: (-t.contribution, t.query_node))
    score = float(late_scores(u, w, [v])[0])
    return LateExplanation(hit.doc_id, score, tuple(terms), rows, query, hit, elements)


# --- the per-part store ----------------------------------------------------------------


def part_dir(index_dir: Path, seq: int) -> Path:
    return Path(index_dir) / LATE_DIR / f"part-{seq:06d}"


def write_part(index_dir: Path, seq: int, vectors: np.ndarray, offsets: np.ndarray, storage: str) -> Path:
    """Node vectors (nodes, L) of part ``seq`` and its row offsets (rows + 1,), written beside and renamed in."""
    target = part_dir(index_dir, seq)
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    codes, scales = quantize(vectors, storage)
    np.save(tmp / "vectors.npy", codes)
    np.save(tmp / "offsets.npy", np.asarray(offsets, np.int64))
    if scales is not None:
        np.save(tmp / "scales.npy", scales)
    shutil.rmtree(target, ignore_errors=True)  # left by a run killed between this rename and its part's commit
    tmp.rename(target)
    return target


def clean_partial(index_dir: Path) -> None:
    folder = Path(index_dir) / LATE_DIR
    if folder.is_dir():
        for p in folder.glob("*.tmp"):
            shutil.rmtree(p, ignore_errors=True)


class NodeVectorStore:
    """Read side: the node vectors of (part, row) locations, memory-mapped."""

    def __init__(self, index_dir: str | Path):
        self.dir = Path(index_dir)
        if not (self.dir / LATE_DIR).is_dir():
            raise FileNotFoundError(
                f"index {self.dir} has no late-interaction node vectors ({self.dir / LATE_DIR} is missing): "
                "build it with a model that has model.late_dim > 0 and index.late_storage int8 or fp16"
            )
        self._open = lru_cache(maxsize=None)(self._load)

    def _load(self, seq: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        d = part_dir(self.dir, seq)
        if not (d / "vectors.npy").exists():
            raise FileNotFoundError(
                f"{d} is missing: part {seq} of index {self.dir} has no node vectors (rebuild the index into a new --out)"
            )
        scales = np.load(d / "scales.npy", mmap_mode="r") if (d / "scales.npy").exists() else None
        return np.load(d / "vectors.npy", mmap_mode="r"), scales, np.load(d / "offsets.npy")

    def nodes(self, locations: list[tuple[int, int]]) -> list[np.ndarray]:
        """Unit node vectors (n_d, L) float32 of each (part, row)."""
        out = []
        for seq, row in locations:
            codes, scales, offsets = self._open(int(seq))
            a, b = int(offsets[row]), int(offsets[row + 1])
            out.append(dequantize(np.asarray(codes[a:b]), None if scales is None else np.asarray(scales[a:b])))
        return out

    def node_counts(self, locations: list[tuple[int, int]]) -> np.ndarray:
        out = np.empty(len(locations), np.int64)
        for k, (seq, row) in enumerate(locations):
            offsets = self._open(int(seq))[2]
            out[k] = offsets[row + 1] - offsets[row]
        return out


def _cut(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
