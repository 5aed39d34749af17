"""One writer per index directory: a second `graphtx index` fails fast and clearly; readers see a consistent snapshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from graphtx.cli import main
from graphtx.config import IndexConfig
from graphtx.errors import LockedError
from graphtx.index.build import build_index
from graphtx.index.search import Index
from graphtx.lock import LOCK_FILE, IndexLock
from tests.index.fixtures import N_DOCS, make_graphs

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}

# `graphtx index` whose encoder waits (up to 90 s) for the file argv[1], so that it is still running while others start
SLOW_INDEX = textwrap.dedent(
    """
    import os, sys, time
    from graphtx.model.encoder import GraphEncoder
    encode, release, deadline = GraphEncoder.encode, sys.argv.pop(1), time.monotonic() + 90
    def slow(self, *a, **kw):
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.05)
        return encode(self, *a, **kw)
    GraphEncoder.encode = slow
    from graphtx.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)

HOLD_LOCK = "import sys, time; from graphtx.lock import IndexLock\nwith IndexLock(sys.argv[1]):\n    print('locked', flush=True); time.sleep(60)\n"


def _note(out: Path) -> dict:
    try:
        text = (out / LOCK_FILE).read_text().strip()
        return json.loads(text) if text else {}
    except (OSError, ValueError):
        return {}


def _wait_for(condition, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the first run ended early: {proc.stderr.read()[-2000:] if proc.stderr else ''}"
        assert time.monotonic() < deadline, "the first run never took the lock"
        time.sleep(0.05)


@pytest.mark.timeout(60)
def test_a_held_lock_refuses_a_second_holder_and_is_released_when_its_process_dies(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)], env=ENV, stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(
            LockedError, match=rf"index {tmp_path} is locked by PID {proc.pid} \(graphtx index started at 20"
        ):
            with IndexLock(tmp_path):
                pass
    finally:
        proc.kill()  # kill -9: the kernel drops the flock, the note with its PID stays
        proc.wait(timeout=10)
    assert _note(tmp_path)["pid"] == proc.pid


def test_a_stale_lock_of_a_dead_process_is_taken_over_with_a_message(tmp_path, capsys):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, timeout=30
    )
    pid = int(dead.stdout)
    (tmp_path / LOCK_FILE).write_text(
        json.dumps({"pid": pid, "host": os.uname().nodename, "started": "2026-01-01T00:00:00Z"}) + "\n"
    )
    with IndexLock(tmp_path) as lock:
        assert lock.took_over["pid"] == pid and _note(tmp_path)["pid"] == os.getpid()
        with IndexLock(tmp_path):  # re-entrant in one process
            pass
        assert _note(tmp_path)["pid"] == os.getpid()
    assert f"took over the stale lock of {tmp_path} left by PID {pid} (no longer running" in capsys.readouterr().err
    assert _note(tmp_path) == {}  # a clean exit leaves no note


@pytest.mark.timeout(300)
def test_two_index_runs_into_one_directory_one_succeeds_the_other_fails_fast(tiny, tmp_path):
    out = tmp_path / "index"
    args = [
        "index",
        "--model",
        str(tiny["model"]),
        "--graphs",
        str(tiny["graphs"]),
        "--out",
        str(out),
        "--chunk-size",
        "16",
        "--quiet",
    ]
    release = tmp_path / "release"
    first = subprocess.Popen(
        [sys.executable, "-c", SLOW_INDEX, str(release), *args],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        _wait_for(lambda: _note(out).get("pid") == first.pid, first)
        started = time.monotonic()
        second = subprocess.run(
            [sys.executable, "-m", "graphtx", *args], env=ENV, capture_output=True, text=True, timeout=120, cwd=REPO
        )
        assert second.returncode == 1  # README: 1 = failure
        assert (
            f"index {out} is locked by PID {first.pid} (graphtx index started at" in second.stderr
            and "Traceback" not in second.stderr
        )
        assert time.monotonic() - started < 60  # fails at once, it does not wait for the first
        # an incremental remove is a writer too
        third = subprocess.run(
            [sys.executable, "-m", "graphtx", "index", "--out", str(out), "--remove", "T-00001"],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
        )
        assert third.returncode == 1 and "is locked by PID" in third.stderr
        release.touch()
        assert first.wait(timeout=150) == 0, first.stderr.read()[-2000:]
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(timeout=10)
    index = Index.open(out)
    assert len(index) == N_DOCS and len(set(index.ids.doc_id)) == N_DOCS
    assert main(["index", "--out", str(out), "--verify"]) == 0


def test_a_reader_keeps_its_snapshot_while_documents_are_added(tiny, tmp_path):
    out = tmp_path / "index"
    half = make_graphs(tmp_path, range(N_DOCS // 2), "half")
    build_index(tiny["model"], half, out, IndexConfig(chunk_size=16), progress=False)
    reader = Index.open(out)
    before = [h.doc_id for h in reader.search(doc_id="T-00003", k=5)]
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=16), progress=False)  # adds the other half
    assert [h.doc_id for h in reader.search(doc_id="T-00003", k=5)] == before and len(
        reader
    ) == N_DOCS // 2  # the old snapshot
    assert len(Index.open(out)) == N_DOCS  # a new reader sees the new one
