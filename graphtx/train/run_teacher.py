"""The teacher of a training run's stage ``pretrain``, when ``train.pretrain_teacher`` names a peer.

``train.pretrain_teacher`` (or ``graphtx train --teacher``) is either a ``graphtx teacher`` directory or
the name of an offline peer (``minilm``, ``mpnet``; graphtx/text/peers.py). Given a name, the run writes
the teacher vectors itself, once, into ``RUN_DIR/teacher/``: every document of ``--corpus`` and of the
corpora behind ``train.pretrain_graphs`` (read from their graphs manifests), encoded as ``graphtx teacher``
does (title + abstract, the eval's token cut). A killed run continues the encoding; a finished one is
reused when the same command runs again (same corpora, peer and weights).

What it gives the stage: the directory the pre-training reads (see graphtx/train/pretrain_graph.py, (c)).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from graphtx.text.peers import PEERS

TEACHER_DIR = "teacher"
TEACHER_FIELDS = ("title", "abstract")


def names_peer(value: str) -> bool:
    """True when ``train.pretrain_teacher`` is a peer's name rather than a teacher directory."""
    return value in PEERS


def pool_corpora(corpus_dir: str | Path, extra_graphs: list[str | Path], log: Callable[[str], None]) -> list[Path]:
    """``corpus_dir`` and the corpora the extra graphs directories were parsed from (their manifest's ``corpus``)."""
    corpora = [Path(corpus_dir)]
    for graphs in extra_graphs:
        try:
            corpus = Path(json.loads((Path(graphs) / "manifest.json").read_text())["corpus"])
        except (OSError, ValueError, KeyError):
            corpus = None
        if corpus is None or not corpus.is_dir():
            log(f"teacher: the corpus of {graphs} is not found ({corpus}); its documents join the pool without a teacher vector")
            continue
        if corpus.resolve() not in {c.resolve() for c in corpora}:
            corpora.append(corpus)
    return corpora


def run_teacher_dir(config, corpus_dir: str | Path, extra_graphs: list[str | Path], out: Path, progress: bool | None,
                    log: Callable[[str], None]) -> Path:  # fmt: skip
    """Write (or reuse) the teacher vectors of peer ``config.train.pretrain_teacher`` for the run in ``out``; the directory."""
    from graphtx.text.peers import peer_path, peer_sha256
    from graphtx.text.teacher import MANIFEST_FILE, write_teacher_vectors

    peer = config.train.pretrain_teacher
    directory = out / TEACHER_DIR
    corpora = pool_corpora(corpus_dir, extra_graphs, log)
    try:
        peer_path(peer, config.eval.peer_cache_dir)  # is the peer installed? (checks its weights)
    except ValueError as err:
        raise ValueError(f"train.pretrain_teacher = {peer}: {err}; or train on the citations alone with `--stages base`") from None
    manifest = directory / MANIFEST_FILE
    if manifest.is_file():
        done = json.loads(manifest.read_text())
        if (done.get("peer"), done.get("sha256"), done.get("corpora")) == (peer, peer_sha256(peer), [str(c) for c in corpora]):
            log(f"teacher: {done.get('documents', 0):,} {peer} vectors already in {directory}")
            return directory
    max_tokens = config.eval.minilm_max_tokens if peer == "minilm" else config.eval.mpnet_max_tokens
    log(f"teacher: encoding the pool's documents with {peer} into {directory} (once; a killed run continues)")
    report = write_teacher_vectors(corpora, directory, peer=peer, fields=TEACHER_FIELDS, max_tokens=max_tokens,
                                   cache_dir=config.eval.peer_cache_dir, progress=progress)  # fmt: skip
    for line in report.lines():
        log(f"teacher: {line}")
    return directory
