"""IndexConfig (``graphtx index``) and SearchConfig (``graphtx search`` and the service): the ``index:`` and ``search:`` sections."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IndexConfig:
    """``graphtx index``: what is embedded, how it is stored, which FAISS index is built."""

    kind: str = "description"  # graph kind embedded per document (the paper: candidates by their full description)
    index_type: str = "flat"  # flat (exact inner product) | ivfpq (compressed, approximate) | hnsw (graph, approximate)
    batch_size: int = 64  # graphs per forward pass
    chunk_size: int = 1024  # documents per committed part file: a kill -9 loses at most one chunk of work
    part_row_group: int = (
        64  # rows per Parquet row group of a part: a hit's metadata and graph are read one group at a time
    )
    shard_size: int = 1_000_000  # documents per FAISS shard file (a part is never split); shards are searched as one
    ivf_nlist: int = 0  # IVF cells; 0 = about 4 sqrt(n), at most train_size / 39 (FAISS wants >= 39 points a cell)
    ivf_nprobe: int = 16  # IVF cells visited per query: recall against speed
    pq_m: int = 0  # PQ sub-quantizers = bytes per vector at 8 bits; 0 = a divisor of dim near dim / 4 (16x smaller than float32)
    pq_nbits: int = 8  # bits per PQ code; training needs at least 2**pq_nbits vectors
    ivf_refine: str = ""  # re-rank IVF-PQ candidates with finer stored codes: "" (off) | SQ8 (1 byte a dim) | SQfp16 (2) | Flat (exact, 4)
    ivf_k_factor: int = 4  # with ivf_refine: k_factor x k candidates are re-ranked
    hnsw_m: int = 32  # HNSW links per node: memory and recall
    hnsw_ef_construction: int = 200  # HNSW candidate list while building: build time against graph quality
    hnsw_ef_search: int = 128  # HNSW candidate list per query (raised to k when k is larger)
    train_size: int = 100_000  # vectors sampled (seeded) to train IVF-PQ
    use_gpu: str = "auto"  # auto: GPU FAISS when a GPU is present (flat, IVF-PQ; HNSW stays on CPU) | never | always
    mmap: bool = True  # open FAISS files memory-mapped where the index type allows (flat and HNSW vectors)
    copy_model: bool = True  # copy the model directory into the index, so the index answers queries on its own
    bm25: bool = True  # build the BM25 index (hybrid search) at the end of `graphtx index`; else built at first use
    bm25_max_chars: int = 10_000  # text kept per document for BM25 (title, abstract, claims, description, in order); building holds it all in memory
    document_max_chars: int = 60_000  # description kept per document for its page and `graphtx show --index` (all claims are kept); 0 = neither
    bm25_k1: float = 1.5  # BM25 term-frequency saturation (bm25s default)
    bm25_b: float = 0.75  # BM25 length normalisation (bm25s default)
    stopwords: str = "en"  # bm25s stop-word list ("" = none)
    stemmer: str = "english"  # PyStemmer (Snowball) language ("" = none)
    late_storage: str = "int8"  # node vectors of a model with a late-interaction head (model.late_dim > 0): int8 (+ a float16 scale a vector) | fp16 | none

    def __post_init__(self) -> None:
        from graphtx.graphs.graph import GRAPH_KINDS

        if self.kind not in GRAPH_KINDS:
            raise ValueError(f"index.kind must be one of {GRAPH_KINDS}, got {self.kind!r}")
        if self.late_storage not in ("int8", "fp16", "none"):
            raise ValueError(f"index.late_storage must be int8, fp16 or none, got {self.late_storage!r}")
        if self.index_type not in ("flat", "ivfpq", "hnsw"):
            raise ValueError(f"index.index_type must be flat, ivfpq or hnsw, got {self.index_type!r}")
        if self.use_gpu not in ("auto", "never", "always"):
            raise ValueError(f"index.use_gpu must be auto, never or always, got {self.use_gpu!r}")
        ones = (
            "batch_size",
            "chunk_size",
            "part_row_group",
            "shard_size",
            "ivf_nprobe",
            "hnsw_m",
            "hnsw_ef_construction",
            "hnsw_ef_search",
            "train_size",
            "bm25_max_chars",
        )
        low = [n for n in ones if getattr(self, n) < 1]
        if low:
            raise ValueError(f"index.{', index.'.join(low)} must be >= 1")
        if self.document_max_chars < 0:
            raise ValueError(
                "index.document_max_chars must be >= 0 (0 = no description or claims kept for the document page)"
            )
        if self.ivf_nlist < 0 or self.pq_m < 0:
            raise ValueError("index.ivf_nlist and index.pq_m must be >= 0 (0 = chosen from the data)")
        if not 1 <= self.pq_nbits <= 16:
            raise ValueError("index.pq_nbits must be in 1..16")
        if self.ivf_refine not in ("", "SQ8", "SQfp16", "Flat") or self.ivf_k_factor < 1:
            raise ValueError(
                f"index.ivf_refine must be '', SQ8, SQfp16 or Flat (got {self.ivf_refine!r}) and index.ivf_k_factor >= 1"
            )
        if self.bm25_k1 < 0 or not 0 <= self.bm25_b <= 1:
            raise ValueError("index.bm25_k1 must be >= 0 and index.bm25_b in [0, 1]")


@dataclass(frozen=True)
class SearchConfig:
    """``graphtx search`` and the service: ranking, hybrid fusion and explanations."""

    k: int = 10  # hits returned
    query_kind: str = "first_claim"  # graph kind a query text becomes (the paper: the first claim)
    # with ranker auto and no fitted ranker: fuse the dense ranking with BM25 by reciprocal rank fusion (true) or the dense
    # ranking alone (false). True since RRF of BM25 and the model was level with dense on EV and far above it on the full
    # texts (benchmarks/results/transfer.md): an adapted model, or any model without a ranker, searches hybrid.
    hybrid: bool = True
    ranker: str = "auto"  # a registered ranker (dense | bm25 | hybrid | convex | learned | learned-lexical | plug-ins); auto = learned when fitted (learned-lexical on another field), else search.hybrid
    # with ranker auto and a fitted ranker: rank with learned-lexical (its fit without the graph features) when the index's
    # documents' term profile is below this cosine to the corpus it was fitted on, unless the model's recorded corpus is at
    # or above it (graphtx.text.field: same field
    # 0.95-0.99, other fields 0.31-0.79 on the sets here); 0 = never
    same_field: float = 0.85
    candidates: int = 100  # hits each ranker contributes to the fusion (at least k)
    rrf_k: int = 60  # RRF constant: score = sum of weight / (rrf_k + rank), rank from 1 (Cormack et al. 2009)
    dense_weight: float = 1.0  # weight of the dense ranking in the fusion
    bm25_weight: float = 1.0  # weight of the BM25 ranking in the fusion
    explain_rows: int = 8  # node matches shown per hit
    explain_max_nodes: int = 40  # nodes drawn per graph in --explain-png (highest degree first)
    rerank: str = "none"  # none | late: re-rank the first stage's (dense or hybrid) top rerank_depth by the node-level late-interaction score
    rerank_depth: int = 100  # candidates of the first stage that rerank scores (at least k)
    link_template: str = ""  # each hit's link, e.g. https://patents.google.com/patent/{id_compact}; placeholders in graphtx/links.py; "" = none
    # --explain: a query feature no hit node holds the words of is "found" by the model when its most similar hit node beats
    # what 1 - found_false_rate of a feature's matches in unrelated documents of the index reach (graphtx/index/calibration.py)
    found_false_rate: float = 0.01
    found_similarity: float | None = None  # a fixed cosine threshold instead of the calibrated one (None: calibrated)

    def __post_init__(self) -> None:
        from graphtx.graphs.graph import GRAPH_KINDS
        from graphtx.links import check_template

        check_template(self.link_template, "the link template (--link-template, config search.link_template)")
        if not 0.0 <= self.same_field <= 1.0:
            raise ValueError(f"search.same_field is a cosine in [0, 1] (0: never check), got {self.same_field}")
        if self.found_similarity is not None and not -1.0 <= self.found_similarity <= 1.0:
            raise ValueError(
                f"search.found_similarity must be a cosine in [-1, 1] (or null: calibrated), got {self.found_similarity}"
            )
        if not 0.0 < self.found_false_rate < 0.5:
            raise ValueError(f"search.found_false_rate must be a share in (0, 0.5), got {self.found_false_rate}")

        if self.query_kind not in GRAPH_KINDS:
            raise ValueError(f"search.query_kind must be one of {GRAPH_KINDS}, got {self.query_kind!r}")
        if self.rerank not in ("none", "late"):
            raise ValueError(f"search.rerank must be none or late, got {self.rerank!r}")
        if self.rerank_depth < 1:
            raise ValueError("search.rerank_depth must be >= 1")
        if min(self.k, self.candidates, self.rrf_k, self.explain_rows, self.explain_max_nodes) < 1:
            raise ValueError("search.k, candidates, rrf_k, explain_rows and explain_max_nodes must be >= 1")
        from graphtx.rank.registry import ranker_names

        if self.ranker not in (*ranker_names(), "auto"):
            raise ValueError(f"search.ranker must be auto or one of {', '.join(ranker_names())}, got {self.ranker!r}")
        if self.dense_weight < 0 or self.bm25_weight < 0 or self.dense_weight + self.bm25_weight == 0:
            raise ValueError("search.dense_weight and bm25_weight must be >= 0, not both 0")
