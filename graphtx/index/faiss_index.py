"""FAISS indexes of graph vectors: exact (flat), IVF-PQ and HNSW, on CPU or GPU.

Legend: n - vectors, q - queries, d - dim, k - hits.

Vectors are L2-normalised, so the metric is inner product (= cosine) for every type:

=========  ==============================  ==================================================
type       FAISS                           parameters (``IndexConfig``)
=========  ==============================  ==================================================
flat       ``IDMap2,Flat``                 none: exact, 4 d bytes a vector
ivfpq      ``IVF{nlist},PQ{m}x{nbits}``    nlist (cells), nprobe (cells a query visits), m, nbits;
           (``IDMap2,...,Refine(SQ8)``)    optionally the k_factor x k best re-ranked with finer codes
hnsw       ``IDMap2,HNSW{M}``              M, efConstruction, efSearch
=========  ==============================  ==================================================

IVF-PQ is trained once, on a seeded sample, and every shard starts from that trained index,
so all shards share one quantizer. GPU FAISS (``faiss.get_num_gpus() > 0``) is used for
training IVF-PQ and for searching flat and IVF-PQ shards; HNSW has no GPU form and stays on
the CPU. Files are written with an atomic rename and read memory-mapped where the type
allows (flat and HNSW keep their vectors in the file's pages, not in process memory).
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from graphtx.atomic import replacing
from graphtx.index.config import IndexConfig

METRIC = "inner_product"


def _faiss():
    try:
        import faiss
    except ImportError:
        raise ImportError(
            "graphtx index needs FAISS: pip install 'graphtx[index]' (faiss-cpu, or faiss-gpu where CUDA is)"
        ) from None
    return faiss


# --- parameters ------------------------------------------------------------------


@dataclass(frozen=True)
class IndexSpec:
    """A FAISS index type with every parameter resolved (stored in the manifest)."""

    index_type: str  # flat | ivfpq | hnsw
    dim: int
    nlist: int = 0  # ivfpq
    nprobe: int = 0  # ivfpq
    pq_m: int = 0  # ivfpq
    pq_nbits: int = 0  # ivfpq
    refine: str = ""  # ivfpq: "", SQ8, SQfp16 or Flat codes that re-rank the PQ candidates
    k_factor: int = 0  # ivfpq with refine: candidates re-ranked = k_factor x k
    hnsw_m: int = 0  # hnsw
    ef_construction: int = 0  # hnsw
    ef_search: int = 0  # hnsw

    @property
    def factory(self) -> str:
        if self.index_type == "flat":
            return "IDMap2,Flat"
        if self.index_type == "ivfpq":
            base = f"IVF{self.nlist},PQ{self.pq_m}x{self.pq_nbits}"
            if not self.refine:
                return base
            return f"IDMap2,{base}," + ("RFlat" if self.refine == "Flat" else f"Refine({self.refine})")
        return f"IDMap2,HNSW{self.hnsw_m}"

    @property
    def needs_training(self) -> bool:
        return self.index_type == "ivfpq"

    @property
    def supports_remove(self) -> bool:
        """remove_ids works in place (HNSW cannot delete from its graph: its shard is rebuilt)."""
        return self.index_type == "flat" or (self.index_type == "ivfpq" and not self.refine)

    def to_dict(self) -> dict:
        return {"factory": self.factory, **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict) -> IndexSpec:
        return cls(**{k: v for k, v in data.items() if k != "factory"})


def auto_pq_m(dim: int) -> int:
    """The divisor of ``dim`` closest to dim / 4 (ties: the larger): 4-d sub-vectors, 16x smaller than float32."""
    divisors = [m for m in range(1, dim + 1) if dim % m == 0]
    return min(divisors, key=lambda m: (abs(m - dim / 4), -m))


def resolve_spec(cfg: IndexConfig, dim: int, n: int) -> IndexSpec:
    """Parameters for ``n`` vectors of ``dim``; 0 in the config means "choose from the data"."""
    if cfg.index_type == "flat":
        return IndexSpec("flat", dim)
    if cfg.index_type == "hnsw":
        return IndexSpec(
            "hnsw", dim, hnsw_m=cfg.hnsw_m, ef_construction=cfg.hnsw_ef_construction, ef_search=cfg.hnsw_ef_search
        )
    train_n = min(n, cfg.train_size)
    if train_n < 2**cfg.pq_nbits:
        raise ValueError(
            f"IVF-PQ with {cfg.pq_nbits}-bit codes needs at least {2**cfg.pq_nbits} vectors to train, the index has {n}: "
            "use index_type flat or hnsw for a corpus this small (or lower index.pq_nbits)"
        )
    nlist = cfg.ivf_nlist or max(1, min(int(4 * math.sqrt(n)), train_n // 39))
    if nlist > train_n:
        raise ValueError(f"index.ivf_nlist ({nlist}) is larger than the training sample ({train_n} vectors)")
    m = cfg.pq_m or auto_pq_m(dim)
    if dim % m:
        raise ValueError(f"index.pq_m ({m}) must divide the vector size ({dim})")
    return IndexSpec(
        "ivfpq",
        dim,
        nlist=nlist,
        nprobe=min(cfg.ivf_nprobe, nlist),
        pq_m=m,
        pq_nbits=cfg.pq_nbits,
        refine=cfg.ivf_refine,
        k_factor=cfg.ivf_k_factor if cfg.ivf_refine else 0,
    )


# --- GPU -----------------------------------------------------------------------------


def gpu_count(use_gpu: str) -> int:
    """GPUs to use: 0 when none is present or ``use_gpu`` is "never"; "always" without one is an error."""
    faiss = _faiss()
    n = faiss.get_num_gpus() if use_gpu != "never" and hasattr(faiss, "StandardGpuResources") else 0
    if use_gpu == "always" and n == 0:
        raise ValueError(
            "index.use_gpu is 'always' but FAISS sees no GPU (is faiss-gpu installed and a CUDA device visible?)"
        )
    return n


def to_gpu(index, spec: IndexSpec, use_gpu: str):
    """The index on all GPUs for searching, when there are some and the type has a GPU form; else unchanged."""
    if spec.index_type == "hnsw" or gpu_count(use_gpu) == 0:
        return index
    faiss = _faiss()
    try:
        options = faiss.GpuMultipleClonerOptions()
        options.useFloat16LookupTables = (
            spec.index_type == "ivfpq" and spec.pq_m > 48
        )  # large PQ tables need half precision in shared memory
        return faiss.index_cpu_to_all_gpus(index, co=options)
    except RuntimeError as err:  # e.g. a PQ size the GPU kernels do not support
        if use_gpu == "always":
            raise
        print(
            f"graphtx index: searching on CPU, FAISS could not move {spec.factory} to the GPU: {err}", file=sys.stderr
        )
        return index


# --- build -----------------------------------------------------------------------------


def new_index(spec: IndexSpec):
    faiss = _faiss()
    index = faiss.index_factory(spec.dim, spec.factory, faiss.METRIC_INNER_PRODUCT)
    if spec.index_type == "hnsw":
        faiss.downcast_index(index.index).hnsw.efConstruction = spec.ef_construction
    return index


def train(spec: IndexSpec, sample: np.ndarray, seed: int, use_gpu: str = "auto"):
    """A trained, empty index. sample: (n, d) float32. Seeded k-means (coarse quantizer and PQ)."""
    faiss = _faiss()
    index = new_index(spec)
    if not spec.needs_training:
        return index
    ivf = faiss.downcast_index(faiss.extract_index_ivf(index))  # IndexIVFPQ
    ivf.cp.seed = seed
    ivf.pq.cp.seed = seed + 1
    ivf.do_polysemous_training = False  # only for polysemous filtering, which search does not use; slow
    sample = np.ascontiguousarray(sample, dtype=np.float32)
    gpu_quantizer = None
    if gpu_count(use_gpu):
        try:  # k-means of the coarse quantizer on the GPU, PQ training on the CPU (the usual FAISS split)
            gpu_quantizer = faiss.index_cpu_to_all_gpus(faiss.IndexFlatIP(spec.dim))
            ivf.clustering_index = gpu_quantizer
        except RuntimeError as err:
            if use_gpu == "always":
                raise
            print(f"graphtx index: training on CPU, GPU clustering failed: {err}", file=sys.stderr)
    index.train(sample)
    if gpu_quantizer is not None:
        ivf.clustering_index = None  # the trained centroids live in the CPU quantizer; drop the GPU helper
    return index


def fill(template, vectors: np.ndarray, ids: np.ndarray, spec: IndexSpec):
    """A copy of the (trained, empty) template holding vectors (n, d) under int64 ids (n,)."""
    faiss = _faiss()
    index = faiss.clone_index(template) if template is not None else new_index(spec)
    if len(ids):
        index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), np.ascontiguousarray(ids, dtype=np.int64))
    return index


def remove(index, ids: np.ndarray) -> int:
    faiss = _faiss()
    return int(index.remove_ids(faiss.IDSelectorBatch(np.ascontiguousarray(ids, dtype=np.int64))))


# --- files -------------------------------------------------------------------------------


def write(index, path: Path) -> None:
    """Atomic: the file is the old one or the new one, never half written."""
    faiss = _faiss()
    with replacing(path) as tmp:
        faiss.write_index(index, str(tmp))


def read(path: Path, spec: IndexSpec, mmap: bool = True):
    """Read a shard for searching (search parameters set); memory-mapped where the type allows."""
    faiss = _faiss()
    if not path.exists():
        raise FileNotFoundError(
            f"FAISS file {path} is missing: the index directory is incomplete (run `graphtx index` again)"
        )
    mappable = spec.index_type in ("flat", "hnsw") or bool(spec.refine)  # their vectors or refine codes are flat arrays
    flags = faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY if mmap and mappable else 0
    # a merged IVF-PQ shard's inverted lists (index/sharded.py) are the .ivfdata file beside it, wherever the index now lies
    index = faiss.read_index(str(path), flags | faiss.IO_FLAG_ONDISK_SAME_DIR)
    set_search_params(index, spec)
    return index


def set_search_params(index, spec: IndexSpec) -> None:
    """Store the spec's nprobe / efSearch in the index (used where per-query parameters are not: GPU indexes)."""
    faiss = _faiss()
    if spec.index_type == "ivfpq":
        faiss.extract_index_ivf(index).nprobe = spec.nprobe
        if spec.refine:
            faiss.downcast_index(index.index).k_factor = spec.k_factor
    elif spec.index_type == "hnsw":
        faiss.downcast_index(index.index).hnsw.efSearch = spec.ef_search


def search_params(spec: IndexSpec, k: int):
    """Per-query parameters (no shared state is changed, so concurrent searches are safe); None for flat."""
    faiss = _faiss()
    if spec.index_type == "ivfpq":
        ivf = faiss.SearchParametersIVF(nprobe=spec.nprobe)
        return faiss.IndexRefineSearchParameters(k_factor=spec.k_factor, base_index_params=ivf) if spec.refine else ivf
    if spec.index_type == "hnsw":
        return faiss.SearchParametersHNSW(efSearch=max(spec.ef_search, k))
    return None


# --- search --------------------------------------------------------------------------------


def search_shards(
    shards: list, queries: np.ndarray, k: int, spec: IndexSpec, on_gpu: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Top k over all shards as one index.

    queries (q, d) float32 → scores (q, k') float32 descending, ids (q, k') int64 with
    k' = min(k, vectors in all shards); FAISS's -1 padding is left out (score -inf, id -1).
    """
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    k = min(k, sum(s.ntotal for s in shards))
    if k == 0:
        return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
    params = None if on_gpu else search_params(spec, k)
    scores, ids = [], []
    for shard in shards:
        if shard.ntotal == 0:
            continue
        kk = min(k, shard.ntotal)
        d, i = (
            shard.search(queries, kk) if params is None else shard.search(queries, kk, params=params)
        )  # (q, kk), (q, kk)
        scores.append(d)
        ids.append(i)
    scores_all = np.concatenate(scores, axis=1)  # (q, sum kk)
    ids_all = np.concatenate(ids, axis=1)  # (q, sum kk)
    scores_all = np.where(ids_all < 0, -np.inf, scores_all)
    order = np.argsort(-scores_all, axis=1, kind="stable")[:, :k]  # (q, k)
    return np.take_along_axis(scores_all, order, axis=1).astype(np.float32), np.take_along_axis(
        ids_all, order, axis=1
    ).astype(np.int64)


def versions() -> dict:
    faiss = _faiss()
    return {"faiss": faiss.__version__, "faiss_gpus": int(faiss.get_num_gpus())}
