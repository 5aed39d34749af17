"""The atomic-output rule: a file or directory holds the old content or the new, never a mix."""

from __future__ import annotations

import errno
import json

import pytest

from graphtx.atomic import (
    PARTIAL_DIR,
    DiskFull,
    StagedDir,
    atomic_write_text,
    interrupted_run,
    is_disk_full,
    replacing,
)


def test_replacing_a_file_keeps_the_old_one_when_writing_fails(tmp_path):
    path = tmp_path / "a.json"
    atomic_write_text(path, "old\n")
    with pytest.raises(KeyboardInterrupt):
        with replacing(path) as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary left


def test_replacing_a_directory_swaps_it_whole(tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with replacing(target) as tmp:
        tmp.mkdir()
        (tmp / "new.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_a_full_disk_becomes_disk_full_naming_the_path(tmp_path):
    path = tmp_path / "x.bin"
    with pytest.raises(DiskFull) as caught:
        with replacing(path):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert str(path) in str(caught.value) and "disk full at" in str(caught.value)
    assert not path.exists() and list(tmp_path.iterdir()) == []
    assert is_disk_full(OSError("IOError: No space left on device"))  # pyarrow's form: no errno
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))


def test_staged_dir_keeps_the_previous_output_until_commit(tmp_path):
    out = tmp_path / "out"
    with StagedDir(out, "`graphtx test`", ("data.txt",)) as staged:
        staged.path("data.txt").write_text("one")
        staged.commit({"n": 1})
    (out / "notes.md").write_text("not ours")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    with pytest.raises(KeyboardInterrupt):
        with StagedDir(out, "`graphtx test`", ("data.txt",)) as staged:
            staged.path("data.txt").write_text("two, half written")
            assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != PARTIAL_DIR} == before
            raise KeyboardInterrupt
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # byte-identical, no partial left

    with StagedDir(out, "`graphtx test`", ("data.txt", "gone.txt")) as staged:
        staged.path("data.txt").write_text("two")
        staged.commit({"n": 2})
    assert (out / "data.txt").read_text() == "two" and json.loads((out / "manifest.json").read_text()) == {"n": 2}
    assert (out / "notes.md").read_text() == "not ours"  # files the stage does not own are left alone
    assert not (out / PARTIAL_DIR).exists()


def test_a_killed_run_leaves_a_marked_partial_that_the_next_run_clears(tmp_path):
    out = tmp_path / "out"
    staged = StagedDir(out, "`graphtx test`", ("data.txt",)).__enter__()
    staged.path("data.txt").write_text("partial")  # kill -9 here: no __exit__
    marker = json.loads((out / PARTIAL_DIR / "PARTIAL.json").read_text())
    assert marker["stage"] == "`graphtx test`" and "incomplete" in marker["note"]
    assert "interrupted" in interrupted_run(out)
    with StagedDir(out, "`graphtx test`", ("data.txt",)) as staged:
        assert not staged.path("data.txt").exists()
        staged.path("data.txt").write_text("whole")
        staged.commit({})
    assert (out / "data.txt").read_text() == "whole" and interrupted_run(out) == ""


HOLD_STAGED = """import sys, time
from graphtx.atomic import StagedDir
with StagedDir(sys.argv[1], "ingest", ("documents.parquet",)) as staged:
    staged.path("documents.parquet").write_bytes(b"first run")
    print("writing", flush=True)
    time.sleep(60)
"""


@pytest.mark.timeout(120)
def test_a_second_writer_of_a_stage_directory_fails_at_once_and_leaves_the_first_run_alone(tmp_path):
    import subprocess
    import sys

    from graphtx.errors import LockedError

    out = tmp_path / "corpus"
    first = subprocess.Popen([sys.executable, "-c", HOLD_STAGED, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "writing"
        with pytest.raises(
            LockedError, match=rf"output directory {out} is locked by PID {first.pid} \(ingest started at"
        ):
            with StagedDir(out, "ingest", ("documents.parquet",)):
                pass
        assert (out / ".partial" / "documents.parquet").read_bytes() == b"first run"  # the second run did not clear it
    finally:
        first.kill()
        first.wait(timeout=30)
    with StagedDir(out, "ingest", ("documents.parquet",)) as again:  # the kernel dropped the dead writer's lock
        again.path("documents.parquet").write_bytes(b"second run")
        again.commit({"documents": 1})
    assert (out / "documents.parquet").read_bytes() == b"second run"
