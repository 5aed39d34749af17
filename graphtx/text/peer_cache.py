"""A store of peer text vectors keyed by content: the same text, peer weights and input cut are encoded once.

A peer text embedder is the slowest part of an evaluation on a CPU (all-mpnet-base-v2 takes about 27 min for
the 3,603 EV-battery abstracts on 2 cores), and a benchmark encodes the same corpus again for every ranker fit
and evaluation. With a cache folder (``eval.peer_vector_cache_dir``; "" = none) each text is encoded once::

    CACHE/<namespace>/chunk-<sha256 of the file>.npz     keys (n,) S32: sha256 of each text (UTF-8)
                                                         vectors (n, dim) float32, what the peer gave

``namespace`` names the peer, its weights' sha256, the input cut and the dtype (``peer_namespace``), so a
vector is only reused where encoding again would give it. A chunk is written atomically and named by its own
checksum; at open each chunk is hashed again, and one that does not match (a damaged disk, a hand edit) is left
out with a warning, so its texts are encoded again. Several processes may share a folder: chunks are only
ever added, never rewritten.
"""

from __future__ import annotations

import hashlib
import io
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from graphtx.atomic import atomic_write_bytes

CHUNK_GLOB = "chunk-*.npz"


def peer_namespace(peer: str, sha256: str, max_tokens: int, dtype: str) -> str:
    """The cache subfolder of one peer encoding: its name, weights, input cut and dtype."""
    return f"{peer}-{sha256[:16]}-{max_tokens}-{dtype}"


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _load(folder: Path, warn: Callable[[str], None]) -> dict[bytes, np.ndarray]:
    """Every intact chunk of ``folder``: text key -> (dim,) float32 vector."""
    known: dict[bytes, np.ndarray] = {}
    for path in sorted(folder.glob(CHUNK_GLOB)):
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != path.stem.removeprefix("chunk-"):
            warn(f"peer vector cache: {path} does not match its checksum; left out (its texts are encoded again)")
            continue
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            keys, vectors = z["keys"], z["vectors"]  # (n,) S32, (n, dim)
        known.update(zip(keys.tolist(), vectors))
    return known


def _store(folder: Path, keys: Sequence[bytes], vectors: np.ndarray) -> Path:
    buffer = io.BytesIO()
    np.savez(buffer, keys=np.array(keys, dtype="S32"), vectors=np.asarray(vectors, dtype=np.float32))
    data = buffer.getvalue()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"chunk-{hashlib.sha256(data).hexdigest()}.npz"
    atomic_write_bytes(path, data)
    return path


def encode_cached(
    texts: Sequence[str],
    encode: Callable[[list[str]], np.ndarray],
    cache_dir: str | Path,
    namespace: str,
    warn: Callable[[str], None] | None = None,
) -> tuple[np.ndarray, int]:
    """(len(texts), dim) float32 vectors of ``texts`` and how many came from the cache.

    ``encode(list of texts) -> (m, dim)`` is called once, on the texts the cache lacks (each distinct text
    once), and only if some are missing; with ``cache_dir`` "" it encodes everything and keeps nothing.
    """
    texts = list(texts)
    if not cache_dir:
        return np.asarray(encode(texts), dtype=np.float32), 0
    warn = warn or (lambda message: print(message, file=sys.stderr))
    folder = Path(cache_dir).expanduser() / namespace
    keys = [text_key(t) for t in texts]
    known = _load(folder, warn) if folder.is_dir() else {}
    hits = sum(k in known for k in keys)
    missing: dict[bytes, str] = {}
    for key, text in zip(keys, texts):
        if key not in known:
            missing.setdefault(key, text)
    if missing:
        fresh = np.asarray(encode(list(missing.values())), dtype=np.float32)  # (len(missing), dim)
        if fresh.shape[0] != len(missing):
            raise ValueError(f"the peer gave {fresh.shape[0]} vectors for {len(missing)} texts")
        _store(folder, list(missing), fresh)
        known.update(zip(missing, fresh))
    if not texts:
        return np.zeros((0, 0), dtype=np.float32), 0
    return np.stack([known[k] for k in keys]).astype(np.float32, copy=False), hits
