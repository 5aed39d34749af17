"""The encode stage: invention graphs → one vector per graph.

SWEM node encoder → sparse graph transformer → weighted pooling → (MoE head).

Names are imported lazily so that ``graphtx.config`` can import
``graphtx.model.config`` without importing torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_EXPORTS = {
    "ModelConfig": "config",
    "PRESETS": "config",
    "GraphBatch": "batch",
    "collate": "batch",
    "SWEMNodeEncoder": "swem",
    "SparseGraphAttention": "attention",
    "attention_edges": "attention",
    "GEGLU": "block",
    "FeedForward": "block",
    "GraphTransformerBlock": "block",
    "WeightedPooling": "pooling",
    "DenseMoEHead": "moe",
    "GraphEncoder": "encoder",
    "EncoderOutput": "encoder",
    "save_model": "io",
    "load_model": "io",
    "ModelDir": "io",
    "fingerprint": "io",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from graphtx.model.attention import SparseGraphAttention, attention_edges
    from graphtx.model.batch import GraphBatch, collate
    from graphtx.model.block import GEGLU, FeedForward, GraphTransformerBlock
    from graphtx.model.config import PRESETS, ModelConfig
    from graphtx.model.encoder import EncoderOutput, GraphEncoder
    from graphtx.model.io import ModelDir, fingerprint, load_model, save_model
    from graphtx.model.moe import DenseMoEHead
    from graphtx.model.pooling import WeightedPooling
    from graphtx.model.swem import SWEMNodeEncoder


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'graphtx.model' has no attribute {name!r}")
    return getattr(importlib.import_module(f"graphtx.model.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return __all__
