"""Chunks of graphs -> vectors: the encoding step of ``graphtx index`` and of ``graphtx encode --engine ray``.

The same ``ChunkEncoder`` runs in the driver (``graphtx index --engine local``) and in each Ray actor (``--engine ray``:
``load_chunk_encoder`` is the actor's initialiser and ``encode_chunk`` its per-chunk work, handed to
``graphtx.ray_engine.map_ordered``), so both engines write the same vectors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when a GPU is visible, else ``cpu``; ``cpu``, ``cuda`` and ``cuda:N`` as given once checked.

    Raises ValueError, in words, for another name or for a GPU that PyTorch does not see here (rather than the
    error torch raises later, at the first tensor moved)."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError):
        parsed = None
    if parsed is None or parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"device {device!r}: give cpu, cuda, cuda:N or auto")
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device {device!r}: PyTorch sees no CUDA GPU here (torch {torch.__version__}); give cpu or auto"
            )
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise ValueError(
                f"device {device!r}: PyTorch sees {torch.cuda.device_count()} GPU(s) here, numbered from 0"
            )
    return device


@dataclass(eq=False, repr=False)  # holds a model: no field-by-field comparison or repr
class ChunkEncoder:
    """A loaded model and tokenizer that turn a chunk of graphs into vectors (and node vectors when ``late``)."""

    model: object  # graphtx.model.encoder.GraphEncoder
    tokenizer: object
    batch_size: int
    late: bool = False

    def __call__(self, chunk: list) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, float]:
        """(vectors (b, dim) float32, node vectors (N, L) or None, offsets (b + 1,) or None, seconds)."""
        t0 = time.time()
        vectors = self.model.encode(chunk, self.tokenizer, batch_size=self.batch_size).to(dtype=torch.float32).numpy()
        nodes = offsets = None
        if self.late:
            nodes, _, offsets = self.model.encode_nodes(chunk, self.tokenizer, batch_size=self.batch_size)
            nodes, offsets = nodes.numpy(), offsets.numpy()
        return vectors, nodes, offsets, time.time() - t0


def load_chunk_encoder(device: str, model_dir: str | Path, batch_size: int, late: bool) -> ChunkEncoder:
    """The model directory loaded once onto ``device``: a Ray actor's initialiser (device first, as the engine gives it)."""
    from graphtx.model.io import load_model

    loaded = load_model(str(model_dir), map_location=resolve_device(device))
    return ChunkEncoder(loaded.model, loaded.tokenizer, batch_size, late)


def encode_chunk(encoder: ChunkEncoder, chunk: list) -> tuple:
    """A Ray actor's per-chunk work: ``encoder(chunk)``."""
    return encoder(chunk)
