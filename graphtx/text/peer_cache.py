"""A store of peer text vectors keyed by content: the same text, peer weights and input cut are encoded once.

A peer text embedder is the slowest part of an evaluation on a CPU (all-mpnet-base-v2 takes about 27 min for
the 3,603 EV-battery abstracts on 2 cores), and a benchmark encodes the same corpus again for every ranker fit
and evaluation. With a cache folder (``eval.peer_vector_cache_dir``: by default ~/.cache/graphtx/peer-vectors; "" = none)
each text is encoded once::

    CACHE/<namespace>/chunk-<sha256 of the file>.npz     keys (n, 32) uint8: sha256 of each text (UTF-8)
                                                         vectors (n, dim) float32, what the peer gave

``namespace`` names the peer, its weights' sha256, the input cut and the dtype (``peer_namespace``), so a
vector is only reused for the same text under the same encoding; it equals a fresh encoding up to float noise
(padding within a batch moves the last digits). A chunk is written atomically and named by its own checksum; at
open each chunk is hashed again, and one that does not match (a damaged disk, a hand edit) or cannot be read is
left out with a warning, so its texts are encoded again. Several processes may share a folder: chunks are only
ever added, never rewritten (where two hold the same text, the chunk whose name sorts last gives its vector).
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from graphtx.atomic import atomic_write_bytes

CHUNK_GLOB = "chunk-*.npz"
KEY_BYTES = 32  # sha256


def peer_namespace(peer: str, sha256: str, max_tokens: int, dtype: str, passages: int = 1) -> str:
    """The cache subfolder of one peer encoding: its name, weights, input cut and dtype, and the passages read with the
    rule that drops a short last one (graphtx/text/peers.py; one passage: the evaluation baselines' namespace)."""
    from graphtx.text.peers import MIN_PASSAGE_TOKENS

    read = f"-passages{passages}-stub{MIN_PASSAGE_TOKENS}" if passages > 1 else ""
    return f"{peer}-{sha256[:16]}-{max_tokens}-{dtype}{read}"


DEFAULT_DIR = "~/.cache/graphtx/peer-vectors"
ENV_DIR = "GRAPHTX_PEER_VECTOR_CACHE"


def resolve_cache_dir(cache_dir: str | Path) -> Path | None:
    """``eval.peer_vector_cache_dir`` as a folder: ``auto`` is $GRAPHTX_PEER_VECTOR_CACHE, else ~/.cache/graphtx/peer-vectors;
    "" is no cache (None)."""
    if str(cache_dir) == "auto":
        cache_dir = os.environ.get(ENV_DIR) or DEFAULT_DIR
    return Path(cache_dir).expanduser() if str(cache_dir) else None


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class PeerVectorCache:
    """One namespace of a cache folder, read once at open; ``add`` writes a chunk and keeps its vectors in memory."""

    def __init__(self, folder: Path, warn: Callable[[str], None] | None = None):
        self.folder = folder
        self.warn = warn or (lambda message: print(message, file=sys.stderr))
        self.known: dict[bytes, np.ndarray] = {}  # text key -> (dim,) float32
        self.unwritable = False  # set at the first failed write: warned once, then memory only
        for path in sorted(folder.glob(CHUNK_GLOB)) if folder.is_dir() else ():
            self._read(path)

    @classmethod
    def open(
        cls, cache_dir: str | Path, namespace: str, warn: Callable[[str], None] | None = None
    ) -> PeerVectorCache | None:
        """The cache of ``namespace`` under ``cache_dir`` (``auto``: resolve_cache_dir); None when ``cache_dir`` is "" (no cache)."""
        folder = resolve_cache_dir(cache_dir)
        return cls(folder / namespace, warn) if folder else None

    def _read(self, path: Path) -> None:
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != path.stem.removeprefix("chunk-"):
            self.warn(f"peer vector cache: {path} does not match its checksum; left out (its texts are encoded again)")
            return
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                keys, vectors = z["keys"], z["vectors"]  # (n, 32) uint8, (n, dim) float32
        except (KeyError, ValueError, OSError) as err:
            self.warn(f"peer vector cache: {path} cannot be read ({err}); left out (its texts are encoded again)")
            return
        if (
            keys.dtype != np.uint8
            or keys.ndim != 2
            or keys.shape[1] != KEY_BYTES
            or vectors.ndim != 2
            or len(keys) != len(vectors)
        ):
            self.warn(
                f"peer vector cache: {path} is not a chunk of this version; left out (its texts are encoded again)"
            )
            return
        self.known.update(zip((bytes(k) for k in keys), vectors))

    def add(self, keys: Sequence[bytes], vectors: np.ndarray) -> Path | None:
        """Write one chunk of ``keys`` (each 32 bytes) and their (n, dim) vectors, atomically, named by its checksum.
        A folder that cannot be written (a read-only home) is warned about once; the vectors are kept in memory only."""
        self.known.update(zip(keys, np.asarray(vectors, dtype=np.float32)))
        if self.unwritable:
            return None
        buffer = io.BytesIO()
        key_rows = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)  # (n, 32)
        np.savez(buffer, keys=key_rows, vectors=np.asarray(vectors, dtype=np.float32))
        data = buffer.getvalue()
        path = self.folder / f"chunk-{hashlib.sha256(data).hexdigest()}.npz"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, data)
        except PermissionError as err:
            self.unwritable = True
            self.warn(
                f"warning: the peer vector cache {self.folder} cannot be written ({err.strerror}): going on without it "
                '(set eval.peer_vector_cache_dir to a writable folder, or "" to turn it off)'
            )
            return None
        return path


def cached_keys(cache_dir: str | Path, namespace: str) -> set[bytes]:
    """The text keys a namespace holds, reading only each chunk's keys (a projection's count: the chunks' checksums
    are checked when the vectors are read, PeerVectorCache)."""
    folder = resolve_cache_dir(cache_dir)
    found: set[bytes] = set()
    for path in sorted((folder / namespace).glob(CHUNK_GLOB)) if folder else ():
        try:
            with np.load(path, allow_pickle=False) as z:
                found.update(bytes(k) for k in z["keys"])  # (n, 32) uint8
        except (KeyError, ValueError, OSError):
            continue  # unreadable: its texts count as not cached, as PeerVectorCache would leave it out
    return found


def encode_cached(
    texts: Sequence[str],
    encode: Callable[[list[str]], np.ndarray],
    cache: PeerVectorCache | None,
    exact: PeerVectorCache | None = None,
) -> tuple[np.ndarray, int]:
    """(len(texts), dim) float32 vectors of ``texts`` and how many came from the caches.

    ``encode(list of texts) -> (m, dim)`` is called once, on the texts the caches lack (each distinct text once),
    and only if some are missing; its vectors go into ``cache``; without a cache it encodes everything and keeps
    nothing. ``exact``, read only and looked at first, holds the same peer's fp32 vectors where ``cache`` holds an
    approximation of them (a teacher's bf16-autocast namespace): an fp32 vector is never the worse one.
    """
    texts = list(texts)
    if cache is None or not texts:
        return np.asarray(encode(texts), dtype=np.float32), 0
    exact_known = exact.known if exact is not None else {}

    def held(key: bytes) -> np.ndarray | None:
        found = exact_known.get(key)
        return found if found is not None else cache.known.get(key)

    keys = [text_key(t) for t in texts]
    hits = sum(held(k) is not None for k in keys)
    missing: dict[bytes, str] = {}
    for key, text in zip(keys, texts):
        if held(key) is None:
            missing.setdefault(key, text)
    if missing:
        fresh = np.asarray(encode(list(missing.values())), dtype=np.float32)  # (len(missing), dim)
        if fresh.ndim != 2 or fresh.shape[0] != len(missing):
            raise ValueError(f"the peer gave {fresh.shape[0]} vectors for {len(missing)} texts")
        cache.add(list(missing), fresh)
    return np.stack([held(k) for k in keys]), hits
