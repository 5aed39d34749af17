"""A graph model's vectors of a graphs directory, cached by content, so evaluations and fits encode once.

``graphtx eval citations --model M --graphs G`` and ``graphtx rank-fit --model M --graphs G`` encode every graph of the
corpus (42,356 full-text description graphs: about 12 minutes on 2 cores) before the first query is scored; a study
that evaluates one model with several rankers, or fits a ranker and then evaluates it, encoded the same graphs each
time. The cache keys a set of vectors by what determines them:

    sha256(model fingerprint, graphs.parquet's sha256 from G/manifest.json, graph kind, the documents asked for)

so another model, a re-parse or another corpus is a miss, never a stale hit. A file is ``KEY.npz`` (``ids`` (n,) str,
``vectors`` (n, dim) float32), written beside and renamed into place; one that does not read is encoded again.
Folder: ``$GRAPHTX_MODEL_VECTOR_CACHE``, else ~/.cache/graphtx/model-vectors; the variable set to "" turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from graphtx.atomic import replacing

DEFAULT_DIR = "~/.cache/graphtx/model-vectors"
ENV_DIR = "GRAPHTX_MODEL_VECTOR_CACHE"


def cache_dir() -> Path | None:
    """The cache folder, or None when $GRAPHTX_MODEL_VECTOR_CACHE is set to ""."""
    value = os.environ.get(ENV_DIR)
    if value == "":
        return None
    return Path(value or DEFAULT_DIR).expanduser()


def graphs_sha(graphs_dir: str | Path) -> str:
    """graphs.parquet's sha256 as the graphs directory's manifest records it ("" when the manifest has none)."""
    try:
        manifest = json.loads((Path(graphs_dir) / "manifest.json").read_text())
        return str(manifest["checksums"]["graphs.parquet"]["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def vector_key(model_fingerprint: str, graphs_dir: str | Path, kind: str, ids: Iterable[str] | None) -> str:
    """The cache key, or "" when the graphs' content is unknown (no manifest checksum: not cached)."""
    content = graphs_sha(graphs_dir)
    if not content or not model_fingerprint:
        return ""
    h = hashlib.sha256()
    for part in (model_fingerprint, content, kind, "\n".join(sorted(ids)) if ids is not None else "*"):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def cached_vectors(key: str, encode: Callable[[], tuple[list[str], np.ndarray]]) -> tuple[list[str], np.ndarray]:
    """(ids, (n, dim) float32 vectors) under ``key`` from the cache, else ``encode()`` stored there. No key or no folder:
    ``encode()`` alone. A write that fails (read-only or full disk) is said once and the vectors are used as they are."""
    folder = cache_dir()
    if not key or folder is None:
        return encode()
    path = folder / f"{key}.npz"
    try:
        with np.load(path, allow_pickle=False) as data:
            return [str(i) for i in data["ids"]], np.asarray(data["vectors"], dtype=np.float32)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError) as err:
        print(f"model-vector cache: {path} does not read ({err}); encoding again", file=sys.stderr)
    ids, vectors = encode()
    try:
        with replacing(path) as tmp, open(tmp, "wb") as f:  # graphtx/atomic.py: written beside, fsynced, renamed
            np.savez(f, ids=np.asarray(ids, dtype=str), vectors=np.asarray(vectors, dtype=np.float32))
    except OSError as err:  # read-only folder, full disk (DiskFull is an OSError)
        print(
            f"model-vector cache: could not write {path} ({err}); the vectors are used without caching", file=sys.stderr
        )
    return ids, vectors
