"""The teacher of a training run's stage ``pretrain``, when ``train.pretrain_teacher`` names a peer.

``train.pretrain_teacher`` (or ``graphtx train --teacher``) is either a ``graphtx teacher`` directory or
the name of an offline peer (``minilm``, ``mpnet``; graphtx/text/peers.py). Given a name, the run writes
the teacher vectors itself, once, into ``RUN_DIR/teacher/``: every document of ``--corpus`` and of the
corpora behind ``train.pretrain_graphs`` (read from their graphs manifests), encoded as ``graphtx teacher``
does: ``train.pretrain_teacher_fields`` (title + abstract by default) at the eval's token cut, in
``train.pretrain_teacher_passages`` windows of it (one by default; four read a full text's description far
beyond its start), on the training device (a GPU encodes in minutes what two CPU cores take hours for), under bf16
autocast on a CPU with bf16 in hardware unless ``train.amp`` is off (graphtx.hardware.teacher_in_bf16).
A killed run continues the encoding; a finished one is reused while its job is the same (the corpora's
documents files, unchanged; the peer and its weights; the fields, the cut, the passages and the precision).

What it gives the stage: the directory the pre-training reads (see graphtx/train/pretrain_graph.py, (c)).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path

from graphtx.text.peers import PEERS

TEACHER_DIR = "teacher"


def names_peer(value: str) -> bool:
    """True when ``train.pretrain_teacher`` is a peer's name rather than a teacher directory."""
    return value in PEERS


def needs_run_teacher(config) -> bool:
    """Does this run encode a teacher itself? (stage pretrain, distillation on, the teacher given by a peer's name)"""
    cfg = config.train
    return "pretrain" in cfg.stages and cfg.pretrain_teacher_weight > 0 and names_peer(cfg.pretrain_teacher)


def require_run_teacher(config) -> None:
    """Before any data work: the named peer and sentence-transformers are installed, else a message that says how to go on."""
    from graphtx.text.peers import require_peer

    peer = config.train.pretrain_teacher
    try:
        require_peer(peer, config.eval.peer_cache_dir)  # checks the weights' sha256 too
    except ValueError as err:
        raise ValueError(
            f"train.pretrain_teacher = {peer}: {err}; or train on the citations alone with `--stages base`"
        ) from None


def pool_corpora(corpus_dir: str | Path, extra_graphs: list[str | Path]) -> list[Path]:
    """``corpus_dir`` and the corpora the extra graphs directories were parsed from (their manifest's ``corpus``, a
    relative one read from the working directory, then from the graphs directory). One not found is said on stderr."""
    corpora = [Path(corpus_dir)]
    for graphs in extra_graphs:
        try:
            name = json.loads((Path(graphs) / "manifest.json").read_text())["corpus"]
            named = Path(name) if isinstance(name, str) and name.strip() else None
        except (OSError, ValueError, KeyError, TypeError):
            named = None
        found = next(
            (
                c
                for c in ([named, Path(graphs) / named] if named and not named.is_absolute() else [named])
                if c and c.is_dir()
            ),
            None,
        )
        if found is None:
            print(
                f"warning: teacher: the corpus of {graphs} is not found ({named}); its documents join the pool without a teacher vector",
                file=sys.stderr,
            )
            continue
        if found.resolve() not in {c.resolve() for c in corpora}:
            corpora.append(found)
    return corpora


def teacher_precision(config, device: str = "cpu") -> str:
    """The precision a run's teacher encodes in on ``device`` (cpu, cuda, cuda:N): graphtx.hardware.teacher_in_bf16."""
    from graphtx.hardware import TEACHER_BF16, teacher_in_bf16

    return TEACHER_BF16 if teacher_in_bf16(str(device).split(":")[0], config.train.amp) else "float32"


def cached_share(config, corpus_dir: str | Path, device: str = "cpu") -> tuple[int, int]:
    """(documents the run's teacher would read, how many of their vectors the peer vector cache already holds) for a
    named peer, without loading it: what `graphtx build --plan` projects the teacher's time from. Held means in a
    namespace the teacher on ``device`` reads: fp32's, and where it encodes under bf16 autocast, that one's too."""
    from graphtx.text.peer_cache import cached_keys, peer_namespace, text_key
    from graphtx.text.peers import peer_sha256
    from graphtx.text.teacher import collect_texts

    peer = config.train.pretrain_teacher
    if not names_peer(peer) or not config.eval.peer_vector_cache_dir:
        return 0, 0
    max_tokens = config.eval.minilm_max_tokens if peer == "minilm" else config.eval.mpnet_max_tokens
    fields, passages = tuple(config.train.pretrain_teacher_fields), config.train.pretrain_teacher_passages
    _, texts, _ = collect_texts([corpus_dir], fields)
    known = set()
    for precision in {"float32", teacher_precision(config, device)}:
        known |= cached_keys(
            config.eval.peer_vector_cache_dir, peer_namespace(peer, peer_sha256(peer), max_tokens, precision, passages)
        )
    return len(texts), sum(text_key(t) in known for t in texts)


def run_teacher_dir(
    config,
    corpus_dir: str | Path,
    extra_graphs: list[str | Path],
    out: Path,
    progress: bool | None,
    log: Callable[[str], None],
    device: str = "cpu",
) -> Path:
    """Write (or reuse) the teacher vectors of peer ``config.train.pretrain_teacher`` for the run in ``out``; the directory.
    ``device``: where the peer encodes (the training's)."""
    from graphtx import integrity
    from graphtx.text.peers import peer_sha256
    from graphtx.text.teacher import MANIFEST_FILE, MEND, job_serves, teacher_job, write_teacher_vectors

    peer = config.train.pretrain_teacher
    directory = out / TEACHER_DIR
    corpora = pool_corpora(corpus_dir, extra_graphs)
    max_tokens = config.eval.minilm_max_tokens if peer == "minilm" else config.eval.mpnet_max_tokens
    fields, passages = tuple(config.train.pretrain_teacher_fields), config.train.pretrain_teacher_passages
    precision = teacher_precision(config, device)
    job = teacher_job(corpora, peer, peer_sha256(peer), fields, max_tokens, passages, precision)
    done = integrity.read_manifest(directory / MANIFEST_FILE, what="teacher vectors", mend=MEND)
    if done is not None and job_serves(done.get("job"), job):  # the same job, or its fp32 vectors where bf16 is asked
        log(f"teacher: {done.get('documents', 0):,} {peer} vectors already in {directory}")
        return directory
    require_run_teacher(config)
    read = f"{', '.join(fields)}" + (
        f", {passages} passages of {max_tokens} tokens" if passages > 1 else f", {max_tokens} tokens"
    )
    log(
        f"teacher: encoding the pool's documents with {peer} ({read}, on {device}"
        + (", bf16 autocast" if precision != "float32" else "")
        + f") into {directory} (once; a killed run continues)"
    )
    report = write_teacher_vectors(
        corpora,
        directory,
        peer=peer,
        fields=fields,
        max_tokens=max_tokens,
        cache_dir=config.eval.peer_cache_dir,
        progress=progress,
        vector_cache_dir=config.eval.peer_vector_cache_dir,
        passages=passages,
        device=device,
        precision=precision,
    )
    for line in report.lines():
        log(f"teacher: {line}")
    return directory


def note_directory_teacher(config, log: Callable[[str], None]) -> None:
    """A teacher given as a directory keeps what it read: say so when train.pretrain_teacher_fields / _passages ask for
    something else (they describe what a named peer reads)."""
    cfg = config.train
    if cfg.pretrain_teacher_weight <= 0 or not cfg.pretrain_teacher or names_peer(cfg.pretrain_teacher):
        return
    from graphtx.text.teacher import MANIFEST_FILE

    try:
        manifest = json.loads((Path(cfg.pretrain_teacher) / MANIFEST_FILE).read_text())
        read = (tuple(manifest.get("fields", ())), int(manifest.get("passages", 1) or 1))
    except (OSError, ValueError, TypeError, AttributeError):
        return  # the stage's own reading of the directory says what is wrong with it
    default = {f.name: f.default for f in dataclasses.fields(cfg)}
    asked = (tuple(cfg.pretrain_teacher_fields), cfg.pretrain_teacher_passages)
    if asked != (default["pretrain_teacher_fields"], default["pretrain_teacher_passages"]) and asked != read:
        log(
            f"warning: teacher: {cfg.pretrain_teacher} holds vectors of {', '.join(read[0])} in {read[1]} passage(s); "
            f"train.pretrain_teacher_fields / _passages ({', '.join(asked[0])}; {asked[1]}) apply to a named peer only and are not used"
        )
