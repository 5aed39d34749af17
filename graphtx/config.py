"""The whole configuration of an experiment: one frozen dataclass per stage, assembled from one YAML file.

Each stage owns its config beside its code; this module only assembles them into
:class:`GraphtxConfig` and reads YAML (with ``extends:``). It is imported by the command line
and by what runs several stages at once, never by a stage itself.

=================  =========================================
``ingest``         :class:`graphtx.corpus.config.IngestConfig`
``parse``          :class:`graphtx.graphs.config.ParseConfig`
``pretrain``       :class:`graphtx.text.config.PretrainConfig`
``model``          :class:`graphtx.model.config.ModelConfig`
``train``          :class:`graphtx.train.config.TrainConfig`
``index``          :class:`graphtx.index.config.IndexConfig`
``search``         :class:`graphtx.index.config.SearchConfig`
``rank``           :class:`graphtx.rank.config.RankConfig`
``serve``          :class:`graphtx.serve.config.ServeConfig`
``eval``           :class:`graphtx.eval.config.EvalConfig`
``distil_phrases`` :class:`graphtx.train.phrase_distil_config.PhraseDistilConfig`
=================  =========================================

``load_config("configs/small.yaml")`` returns a :class:`GraphtxConfig`; unknown
keys are errors (a typo must not silently fall back to a default; :mod:`graphtx.from_dict`).
The stage configs are re-exported here (``from graphtx.config import IndexConfig`` works).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from graphtx.corpus.config import IngestConfig
from graphtx.eval.config import EvalConfig
from graphtx.from_dict import from_dict, with_overrides
from graphtx.graphs.config import ParseConfig
from graphtx.index.config import IndexConfig, SearchConfig
from graphtx.model.config import ModelConfig
from graphtx.rank.config import RankConfig
from graphtx.serve.config import ServeConfig, is_loopback
from graphtx.text.config import PretrainConfig
from graphtx.train.config import TrainConfig
from graphtx.train.phrase_distil_config import PhraseDistilConfig

REPO_ROOT = Path(__file__).resolve().parents[1]

__all__ = [
    "REPO_ROOT",
    "EvalConfig",
    "GraphtxConfig",
    "IndexConfig",
    "IngestConfig",
    "ModelConfig",
    "ParseConfig",
    "PhraseDistilConfig",
    "PretrainConfig",
    "RankConfig",
    "SearchConfig",
    "ServeConfig",
    "TrainConfig",
    "config_from_dict",
    "is_loopback",
    "load_config",
    "with_overrides",
]


@dataclass(frozen=True)
class GraphtxConfig:
    name: str = "default"  # the experiment's name, written into run summaries
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
    distil_phrases: PhraseDistilConfig = field(default_factory=PhraseDistilConfig)


def config_from_dict(data: dict[str, Any]) -> GraphtxConfig:
    return from_dict(GraphtxConfig, data or {}, "config")


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
