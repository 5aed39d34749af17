"""Teacher vectors: a peer text embedder's document vectors, written once, read by pre-training.

``graphtx teacher CORPUS... --peer minilm --out DIR`` encodes every document of the corpora with an
offline peer (graphtx/text/peers.py: all-MiniLM-L6-v2 or all-mpnet-base-v2, sha256-checked) and
writes::

    DIR/vectors.parquet   doc_id: string, vector: fixed_size_list<float32>[dim] (L2-normalised)
    DIR/manifest.json     peer, its weights' sha256, fields, max_tokens, documents, dim, checksums (sealed)

A document's text is its ``fields`` joined (default title and abstract, what the evaluation's text
baselines read); a document with none of them reads the start of its description, then claims; one
with no text at all is skipped and listed in the manifest. With ``--passages N`` a document's text is read in up
to N consecutive windows of ``--max-tokens`` tokens and its vector is their renormalised mean (a teacher over
descriptions then sees more than their start; ``--device`` puts the peer on a GPU). A document id seen in two corpora: the
first corpus wins. The encoding is done in chunks kept in ``DIR/.partial/``: a killed run continues
where it stopped (the same command), a different job (corpora, peer, fields, tokens, passages, precision) starts over.

Precision: on a CPU with bf16 in hardware the peer's forward runs under bf16 autocast (graphtx.hardware.teacher_in_bf16;
``train.amp: false`` keeps fp32), its vectors normalised again in fp32 and kept in the peer vector cache under their
own name (dtype ``bf16-autocast``). The cache's fp32 vectors of the same peer and cut, an evaluation's, are used first,
and so are a killed fp32 run's chunks and a finished fp32 directory (graphtx/train/run_teacher.py): ``job_serves``.

The stage ``pretrain`` reads the file (``train.pretrain_teacher``) and distils the teacher's
document-to-document similarities into the graph encoder (graphtx/train/pretrain_graph.py, (c)).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphtx import integrity
from graphtx.atomic import StagedDir, atomic_write_json, atomic_write_table
from graphtx.corpus.schema import PatentDocument
from graphtx.corpus.store import documents_path, iter_documents
from graphtx.hardware import TEACHER_BF16
from graphtx.progress import progress_bar
from graphtx.text.peer_cache import PeerVectorCache, encode_cached, peer_namespace
from graphtx.text.peers import PEER_NAMES, TEACHER_FIELDS, lazy_encoder, peer_path, peer_sha256

VECTORS_FILE, MANIFEST_FILE, JOB_FILE = "vectors.parquet", "manifest.json", "job.json"
CHUNK_DOCS = 1024  # documents per resumable chunk
FALLBACK_CHARS = 2000  # a document without the asked fields: this much of its description or claims
MEND = "Re-run `graphtx teacher` to write it again (a training run's RUN/teacher: delete it, the same `graphtx train` writes it again)."


@dataclass(frozen=True)
class TeacherReport:
    out: Path
    peer: str
    documents: int
    skipped: int
    dim: int
    seconds: float
    resumed_chunks: int
    from_cache: int = 0  # documents whose vectors the peer vector cache held (eval.peer_vector_cache_dir)
    cache_dir: str = ""
    # the encoding's: float32, or TEACHER_BF16 (bf16 autocast on a CPU with bf16 in hardware)
    precision: str = "float32"

    def lines(self) -> list[str]:
        resumed = (
            f"; {self.resumed_chunks} chunks of {CHUNK_DOCS} taken from the interrupted run"
            if self.resumed_chunks
            else ""
        )
        cached = (
            f"{self.from_cache:,} of them from the peer vector cache {self.cache_dir}, the others encoded"
            if self.cache_dir
            else "no peer vector cache (eval.peer_vector_cache_dir is empty)"
        )
        precision = (
            "; encoded under bf16 autocast (a CPU with bf16 in hardware; train.amp: false keeps fp32)"
            if self.precision == TEACHER_BF16
            else ""
        )
        return [
            f"wrote {self.documents:,} documents' vectors of {PEER_NAMES[self.peer]} ({self.dim}-d) into {self.out} in {self.seconds:.1f} s{resumed}",
            cached + precision,
            f"skipped (no text): {self.skipped:,}" + (f" (each in {self.out / MANIFEST_FILE})" if self.skipped else ""),
        ]

    def to_json(self) -> dict:
        return {
            "out": str(self.out),
            "peer": self.peer,
            "documents": self.documents,
            "skipped": self.skipped,
            "dim": self.dim,
            "seconds": self.seconds,
            "resumed_chunks": self.resumed_chunks,
            "from_cache": self.from_cache,
            "cache_dir": self.cache_dir,
            "precision": self.precision,
        }


def teacher_text(doc: PatentDocument, fields: Sequence[str]) -> str:
    """The text the teacher reads: ``fields`` joined by newlines (as the evaluation's peer baselines join them, so
    both find each other's vectors in the peer vector cache); else the start of the description or claims; '' if none."""
    parts = []
    for name in fields:
        value = " ".join(c.text for c in doc.claims) if name == "claims" else getattr(doc, name)
        if value and value.strip():
            parts.append(value.strip())
    if parts:
        return "\n".join(parts)
    fallback = doc.description.strip() or " ".join(c.text for c in doc.claims).strip()
    return fallback[:FALLBACK_CHARS]


def collect_texts(corpus_dirs: Sequence[str | Path], fields: Sequence[str]) -> tuple[list[str], list[str], list[dict]]:
    """(ids, texts, skipped records) over the corpora, first corpus wins for a repeated id."""
    ids, texts, skipped, seen = [], [], [], set()
    for corpus in corpus_dirs:
        for doc in iter_documents(corpus):
            if doc.id in seen:
                continue
            seen.add(doc.id)
            text = teacher_text(doc, fields)
            if not text:
                skipped.append(
                    {
                        "doc_id": doc.id,
                        "corpus": str(corpus),
                        "reason": "no text in title, abstract, description or claims",
                    }
                )
                continue
            ids.append(doc.id)
            texts.append(text)
    return ids, texts, skipped


def teacher_job(
    corpus_dirs: Sequence[str | Path],
    peer: str,
    sha: str,
    fields: Sequence[str],
    max_tokens: int,
    passages: int = 1,
    precision: str = "float32",
) -> dict:
    """What the vectors are made of: each corpus's documents file (resolved path, size, mtime), the peer, its weights, the input
    (``passages`` named only when > 1 and ``precision`` only when not float32, so the vectors written before either
    existed stay valid)."""
    files = []
    for c in corpus_dirs:
        p = documents_path(c)
        st = p.stat()
        files.append({"path": str(p.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns})
    job = {
        "corpora": files,
        "peer": peer,
        "sha256": sha,
        "fields": list(fields),
        "max_tokens": max_tokens,
        "chunk_docs": CHUNK_DOCS,
        "text": "fields joined by newlines",
    }
    return (
        job
        | ({"passages": passages} if passages > 1 else {})
        | ({"precision": precision} if precision != "float32" else {})
    )


def job_serves(found: dict | None, job: dict) -> bool:
    """Whether vectors made by job ``found`` (a finished directory's or a killed run's chunks) serve ``job``: the same
    job, or the same job in fp32 where ``job`` asks for bf16 autocast (fp32 vectors are never the worse ones)."""
    if found is None:
        return False
    return found == job or (
        job.get("precision") == TEACHER_BF16 and found == {k: v for k, v in job.items() if k != "precision"}
    )


def write_teacher_vectors(
    corpus_dirs: Sequence[str | Path],
    out: str | Path,
    peer: str = "minilm",
    fields: Sequence[str] = ("title", "abstract"),
    max_tokens: int = 256,
    batch_size: int = 64,
    cache_dir: str = "",
    progress: bool | None = None,
    vector_cache_dir: str = "",
    passages: int = 1,
    device: str = "cpu",
    precision: str = "float32",
) -> TeacherReport:
    """Encode every document of ``corpus_dirs`` with ``peer``, inputs cut at ``max_tokens``, into ``out`` (see the module docstring).
    ``passages`` > 1: a document's vector is the mean of its first ``passages`` windows of ``max_tokens`` tokens
    (graphtx/text/peers.py ``encode_passages``), so a teacher reading descriptions sees more than their start.
    ``precision``: float32, or TEACHER_BF16 (the forward under bf16 autocast; the caller asks graphtx.hardware.teacher_in_bf16)."""
    import pyarrow as pa

    bad = [f for f in fields if f not in TEACHER_FIELDS]
    if bad or not fields:
        raise ValueError(f"teacher fields must be some of {', '.join(TEACHER_FIELDS)}; got {', '.join(bad) or 'none'}")
    if precision not in ("float32", TEACHER_BF16):
        raise ValueError(f"teacher precision must be float32 or {TEACHER_BF16}, got {precision}")
    if precision == TEACHER_BF16 and str(device).split(":")[0] != "cpu":
        raise ValueError(
            f"teacher precision {TEACHER_BF16} is a CPU's (graphtx.hardware.teacher_in_bf16); on {device} use float32"
        )
    if batch_size < 1 or max_tokens < 1 or passages < 1:
        raise ValueError("--batch-size, --max-tokens and --passages must be >= 1")
    if passages > 1 and max_tokens <= 2:
        raise ValueError(
            f"--passages {passages} needs --max-tokens of at least 3 (two of them are the peer's special tokens)"
        )
    started = time.time()
    path = peer_path(peer, cache_dir)  # checks the weights before any work
    sha = peer_sha256(peer)
    ids, texts, skipped = collect_texts(corpus_dirs, fields)
    if not ids:
        raise ValueError(f"no document with text in {', '.join(map(str, corpus_dirs))}: nothing to encode")
    job = teacher_job(corpus_dirs, peer, sha, fields, max_tokens, passages, precision)
    with StagedDir(out, "`graphtx teacher`", (VECTORS_FILE,), resumable=True) as staged:
        chunks_dir = staged.path("chunks")
        job_path = staged.path(JOB_FILE)
        found = json.loads(job_path.read_text()) if job_path.exists() else None
        if not job_serves(found, job):  # another job: its chunks are not ours
            if chunks_dir.exists():
                for f in chunks_dir.iterdir():
                    f.unlink()
        if found != job:  # a killed fp32 run's chunks, taken by a bf16 one, are kept: fp32 vectors serve it
            atomic_write_json(job_path, job)
        chunks_dir.mkdir(exist_ok=True)
        n_chunks = (len(ids) + CHUNK_DOCS - 1) // CHUNK_DOCS
        done = {int(f.stem) for f in chunks_dir.glob("*.npy")}
        encode = lazy_encoder(
            path, max_tokens, batch_size, device=device, passages=passages, autocast_bf16=precision == TEACHER_BF16
        )  # loaded at the first text not cached
        cache = PeerVectorCache.open(
            vector_cache_dir, peer_namespace(peer, sha, max_tokens, precision, passages)
        )  # float32 and one passage: the baselines'
        exact = (
            PeerVectorCache.open(vector_cache_dir, peer_namespace(peer, sha, max_tokens, "float32", passages))
            if precision != "float32"
            else None
        )  # read first: fp32 vectors already there
        from_cache = 0
        with progress_bar(total=len(ids), desc=f"teacher {peer}", unit="doc", enabled=progress) as bar:
            for k in range(n_chunks):
                lo, hi = k * CHUNK_DOCS, min(len(ids), (k + 1) * CHUNK_DOCS)
                if k not in done:
                    vectors, hits = encode_cached(texts[lo:hi], encode, cache, exact)  # (hi - lo, dim)
                    from_cache += hits
                    tmp = chunks_dir / f"{k:05d}.tmp.npy"
                    np.save(tmp, vectors)
                    tmp.replace(chunks_dir / f"{k:05d}.npy")
                bar.update(hi - lo)
        matrix = np.concatenate([np.load(chunks_dir / f"{k:05d}.npy") for k in range(n_chunks)])  # (n, dim)
        dim = int(matrix.shape[1])
        table = pa.table(
            {
                "doc_id": pa.array(ids, pa.string()),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1), pa.float32()), dim),
            }
        )
        atomic_write_table(staged.path(VECTORS_FILE), table)
        seconds = round(time.time() - started, 1)
        manifest = integrity.seal(
            {
                "peer": peer,
                "model": PEER_NAMES[peer],
                "sha256": sha,
                "fields": list(fields),
                "max_tokens": max_tokens,
                "passages": passages,
                "precision": precision,
                "corpora": [str(c) for c in corpus_dirs],
                "documents": len(ids),
                "dim": dim,
                "skipped": skipped,
                "seconds": seconds,
                "resumed_chunks": len(done),
                "job": job,
                "fingerprint": hashlib.sha256(matrix.tobytes()).hexdigest()[:16],
                integrity.CHECKSUMS_KEY: {VECTORS_FILE: integrity.file_entry(staged.path(VECTORS_FILE))},
            }
        )
        staged.commit(manifest)
    return TeacherReport(
        Path(out),
        peer,
        len(ids),
        len(skipped),
        dim,
        seconds,
        len(done),
        from_cache,
        str(cache.folder.parent) if cache else "",
        precision,
    )


@dataclass(frozen=True)
class TeacherVectors:
    """A teacher vectors directory, read: ids, (n, dim) float32 unit vectors, and what made them."""

    doc_ids: tuple[str, ...]
    vectors: np.ndarray  # (n, dim) float32, rows L2-normalised
    manifest: dict

    @property
    def label(self) -> str:
        return teacher_label(self.manifest)


def teacher_label(manifest: dict) -> str:
    """What a teacher vectors directory holds, in words: its peer, the fields read, (when > 1) the passages and (when
    not fp32) the precision."""
    passages = int(manifest.get("passages", 1) or 1)
    read = f"; {passages} passages of {manifest.get('max_tokens', '?')} tokens" if passages > 1 else ""
    named = manifest.get("precision", "float32")
    precision = "; bf16 autocast" if named == TEACHER_BF16 else (f"; {named}" if named != "float32" else "")
    return f"{manifest.get('model', '?')} ({', '.join(manifest.get('fields', []))}{read}{precision})"


def load_teacher_vectors(directory: str | Path) -> TeacherVectors:
    """Read and check a ``graphtx teacher`` directory (manifest seal and the vectors' sha256)."""
    import pyarrow.parquet as pq

    directory = Path(directory)
    manifest = integrity.read_manifest(directory / MANIFEST_FILE, what="teacher vectors", mend=MEND)
    if manifest is None:
        raise FileNotFoundError(
            f"{directory} is not a teacher vectors directory (no {MANIFEST_FILE}): run `graphtx teacher CORPUS --out {directory}`, "
            f"or name a peer ({', '.join(PEER_NAMES)}) for the training run to encode"
        )
    integrity.require(
        directory, manifest.get(integrity.CHECKSUMS_KEY, {}), what="teacher vectors", mend=MEND, hash_limit=None
    )
    table = pq.read_table(directory / VECTORS_FILE)
    dim = int(manifest["dim"])
    flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    vectors = np.ascontiguousarray(flat.reshape(-1, dim), dtype=np.float32)  # (n, dim)
    return TeacherVectors(tuple(table.column("doc_id").to_pylist()), vectors, manifest)
