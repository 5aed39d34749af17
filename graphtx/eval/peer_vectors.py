"""A peer embedder's cosines read from vectors it already wrote (``--peer-vectors DIR``), not encoded again.

all-mpnet-base-v2 over 42k full texts takes about five hours on two CPU cores and minutes on a GPU. ``graphtx teacher
--device cuda`` writes those vectors once (a ``graphtx teacher`` directory, sealed, its manifest saying which peer read
which fields, at how many tokens, in how many passages); ``graphtx eval citations --peer-vectors DIR`` and ``graphtx
rank-fit --peer PEER --peer-vectors DIR`` then use them wherever that peer appears: its baseline row, ``--ranker-peer``
and the ranker fitted over its cosines. A document the directory has no vector for is unknown (DenseSystem's rules:
never ranked as a candidate; as a query, it ranks by id only), and the row's coverage says how many.

A ranker is tied to what its dense features mean: :attr:`PeerVectorsSystem.fingerprint` is the peer's weights and its
input length, as the encoding baseline's (``mpnet:<sha>:384``), with the number of passages when more than one. A ranker
fitted over title + abstract vectors therefore accepts vectors of another directory made the same way, and refuses
passage vectors (fit one over those). Like the encoding baseline's, it names the encoder (weights, cut, passages), not
the text fields it read: a ranker fitted on abstracts and used zero-shot on full texts is a transfer one may want, and the
report notes when the vectors' fields are not the evaluation's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from graphtx.eval.systems import DenseSystem
from graphtx.text.peers import PEER_NAMES, peer_sha256


def read_peer_manifest(directory: str | Path) -> dict:
    """The manifest of a ``graphtx teacher`` directory (its seal checked), its peer known and its weights the checked ones."""
    from graphtx import integrity
    from graphtx.text.teacher import MANIFEST_FILE, MEND

    manifest = integrity.read_manifest(Path(directory) / MANIFEST_FILE, what="teacher vectors", mend=MEND)
    if manifest is None:
        raise FileNotFoundError(
            f"--peer-vectors {directory}: no {MANIFEST_FILE} there; write one with `graphtx teacher CORPUS --peer PEER --out {directory}`"
        )
    peer = manifest.get("peer")
    if peer not in PEER_NAMES:
        raise ValueError(f"--peer-vectors {directory}: written by peer {peer!r}, not one of {', '.join(PEER_NAMES)}")
    if manifest.get("sha256") != peer_sha256(peer):
        raise ValueError(
            f"--peer-vectors {directory}: its {peer} weights (sha256 {str(manifest.get('sha256'))[:12]}…) are not the checked ones"
        )
    return manifest


def peer_vector_dirs(directories: Sequence[str | Path] | None) -> dict[str, Path]:
    """{peer: directory} of ``--peer-vectors``; one directory a peer (ValueError for a second)."""
    out: dict[str, Path] = {}
    for directory in dict.fromkeys(Path(d).resolve() for d in directories or ()):  # the same directory twice is once
        peer = read_peer_manifest(directory)["peer"]
        if peer in out:
            raise ValueError(
                f"--peer-vectors: {out[peer]} and {directory} are both {peer} vectors; give one directory a peer"
            )
        out[peer] = Path(directory)
    return out


class PeerVectorsSystem(DenseSystem):
    """Cosines of a peer's vectors from a ``graphtx teacher`` directory; ``name`` is the peer's, as its encoding baseline."""

    def __init__(self, directory: str | Path, query_fields: Sequence[str] = (), candidate_fields: Sequence[str] = ()):
        """``query_fields`` / ``candidate_fields``: what the evaluation reads (its ``query_fields``, ``candidate_fields``).
        One vector a document serves both sides, so they must be the same; when they are not what the vectors read, the
        report notes it (a ranker fitted on abstracts, evaluated on full texts over title + abstract vectors, is one such
        zero-shot transfer)."""
        super().__init__()
        self.directory = Path(directory)
        self.manifest = read_peer_manifest(self.directory)  # checked now: a wrong directory fails before any work
        if tuple(query_fields) != tuple(candidate_fields):
            raise ValueError(
                f"--peer-vectors {directory}: one vector a document cannot read {'+'.join(query_fields)} for queries and "
                f"{'+'.join(candidate_fields)} for candidates (e.g. --known-item); encode the peer instead (no --peer-vectors)"
            )
        read = tuple(self.manifest.get("fields", ()))
        self.fields_note = (
            f"its vectors read {'+'.join(read)}, this evaluation's text is {'+'.join(query_fields)}"
            if query_fields and tuple(query_fields) != read
            else ""
        )
        self.name = self.manifest["peer"]
        self.label = self._describe()

    @property
    def passages(self) -> int:
        return int(self.manifest.get("passages", 1) or 1)

    @property
    def fingerprint(self) -> str:
        """What a ranker over these cosines is tied to: the weights, the input length and (when > 1) the passages."""
        m = self.manifest
        return f"{self.name}:{m['sha256'][:16]}:{m.get('max_tokens', '?')}" + (
            f"x{self.passages}" if self.passages > 1 else ""
        )

    def _describe(self) -> str:
        from graphtx.text.teacher import teacher_label

        return f"{teacher_label(self.manifest)}, vectors of {self.directory.name}"

    def fit(self, corpus) -> PeerVectorsSystem:
        from graphtx.eval.systems import vectors_by_id
        from graphtx.text.teacher import load_teacher_vectors

        super().fit(corpus)
        read = load_teacher_vectors(self.directory)  # seal and checksums verified
        self.manifest = read.manifest
        vectors, known = vectors_by_id(list(read.doc_ids), read.vectors, corpus, f"--peer-vectors {self.directory}")
        self.set_vectors(vectors, vectors, known, known)
        return self

    def info(self) -> dict:
        m = self.manifest
        return {
            "peer_vectors": str(self.directory),
            "peer": self.name,
            "sha256": m.get("sha256"),
            "fields": m.get("fields"),
            "max_tokens": m.get("max_tokens"),
            "passages": self.passages,
            # not in the fingerprint: bf16-autocast vectors are fp32's to within a cosine of 1e-4
            "precision": m.get("precision", "float32"),
            "documents": m.get("documents"),
            "vectors_fingerprint": m.get("fingerprint"),
            **self.coverage(),
            **({"fields_note": self.fields_note} if self.fields_note else {}),
        }
