"""kill -9 at any point of `graphtx index`, then the same command: every document exactly once.

The build runs in a subprocess whose encoder (and, for the finalize test, FAISS writer) is
slowed down, so the kill lands where the test wants it; the resume runs the real code.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from graphtx.config import IndexConfig
from graphtx.index.build import build_index
from graphtx.index.search import Index
from graphtx.index.store import IndexStore
from tests.index.fixtures import N_DOCS

CHUNK = 8
REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from graphtx.config import IndexConfig
    from graphtx.index import build, faiss_index
    from graphtx.model.encoder import GraphEncoder

    encode, write = GraphEncoder.encode, faiss_index.write
    GraphEncoder.encode = lambda self, *a, **kw: (time.sleep(float(sys.argv[4])), encode(self, *a, **kw))[1]
    faiss_index.write = lambda *a, **kw: (time.sleep(float(sys.argv[5])), write(*a, **kw))[1]
    print("started", flush=True)
    build.build_index(sys.argv[1], sys.argv[2], sys.argv[3], IndexConfig(chunk_size=%d, shard_size=40), progress=False)
    print("finished", flush=True)
    """
    % CHUNK
)


def _start(tiny, out: Path, encode_sleep: float, write_sleep: float) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    args = [
        sys.executable,
        "-c",
        SCRIPT,
        str(tiny["model"]),
        str(tiny["graphs"]),
        str(out),
        str(encode_sleep),
        str(write_sleep),
    ]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)


def _kill_when(proc: subprocess.Popen, condition, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the build ended before the kill point: {proc.stderr.read().decode()[-2000:]}")
        if time.time() > deadline:
            proc.kill()
            raise AssertionError("the kill point was never reached")
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL


def _assert_complete(out: Path, reference: Path) -> None:
    """Each document once, with the vector a build that was never killed gives."""
    store = IndexStore(out)
    versions = store.read_versions()
    assert versions.num_rows == N_DOCS, "a document was committed twice, or lost"
    assert sorted(versions.column("doc_id").to_pylist()) == sorted(IndexStore(reference).live().doc_id)
    index, ref = Index.open(out), Index.open(reference)
    assert len(index) == N_DOCS and sorted(index.ids.doc_id) == sorted(ref.ids.doc_id)
    assert sum(s["count"] for s in index.manifest["shards"]) == N_DOCS
    assert not list(out.rglob("*.tmp"))
    for d in ("T-00000", "T-00063", "T-00119"):
        a, b = index.search(doc_id=d, k=10), ref.search(doc_id=d, k=10)
        assert [h.doc_id for h in a] == [h.doc_id for h in b]
        np.testing.assert_allclose([h.score for h in a], [h.score for h in b], atol=1e-5)


@pytest.fixture(scope="module")
def reference(tiny, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "index"
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=CHUNK, shard_size=40), progress=False)
    return out


@pytest.mark.timeout(180)
def test_kill_while_embedding_then_resume(tiny, reference, tmp_path):
    out = tmp_path / "index"
    store = IndexStore(out)
    proc = _start(tiny, out, encode_sleep=0.15, write_sleep=0.0)
    _kill_when(proc, lambda: len(store.part_numbers()) >= 3)
    committed = store.read_versions().num_rows
    assert 3 * CHUNK <= committed < N_DOCS and not (out / "manifest.json").exists()

    report = build_index(
        tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=CHUNK, shard_size=40), progress=False
    )
    assert report.resumed and report.added == N_DOCS - committed and report.skipped_existing == committed
    _assert_complete(out, reference)


@pytest.mark.timeout(180)
def test_kill_while_finalizing_then_resume(tiny, reference, tmp_path):
    out = tmp_path / "index"
    store = IndexStore(out)
    proc = _start(tiny, out, encode_sleep=0.0, write_sleep=2.0)
    _kill_when(proc, lambda: store.read_versions().num_rows == N_DOCS and (out / "shards").is_dir())
    assert not (out / "manifest.json").exists()

    report = build_index(
        tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=CHUNK, shard_size=40), progress=False
    )
    assert report.resumed and report.added == 0
    _assert_complete(out, reference)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_killed_again_and_again_at_random_points(tiny, reference, tmp_path):
    out = tmp_path / "index"
    rng = np.random.default_rng(0)
    for _ in range(6):
        proc = _start(tiny, out, encode_sleep=0.05, write_sleep=0.2)
        while proc.stdout.readline().strip() != b"started":  # the kill window starts once imports are done
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        time.sleep(float(rng.uniform(0.0, 1.5)))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    report = build_index(
        tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=CHUNK, shard_size=40), progress=False
    )
    assert report.count == N_DOCS
    _assert_complete(out, reference)
    assert json.loads((out / "state.json").read_text())["run"] is None


def test_an_interrupted_replace_run_resumes_without_redoing_or_duplicating(tiny, tmp_path, monkeypatch):
    from tests.index.fixtures import make_graphs

    out = tmp_path / "index"
    cfg = IndexConfig(chunk_size=CHUNK, bm25=False)
    build_index(tiny["model"], tiny["graphs"], out, cfg, progress=False)
    changed = make_graphs(tmp_path, range(0, 40), "changed", seed=5)
    commit = IndexStore.commit_part
    calls = []

    def failing_commit(self, *args, **kwargs):
        if len(calls) == 2:
            raise KeyboardInterrupt  # stands in for a kill between two commits
        calls.append(1)
        return commit(self, *args, **kwargs)

    monkeypatch.setattr(IndexStore, "commit_part", failing_commit)
    with pytest.raises(KeyboardInterrupt):
        build_index(tiny["model"], changed, out, cfg, replace=True, progress=False)
    monkeypatch.setattr(IndexStore, "commit_part", commit)
    report = build_index(tiny["model"], changed, out, cfg, replace=True, progress=False)
    assert report.resumed and report.added == 40 - 2 * CHUNK and report.skipped_existing == 2 * CHUNK
    live = IndexStore(out).live()
    assert len(live) == len(set(live.doc_id)) == N_DOCS
    assert IndexStore(out).read_versions().num_rows == N_DOCS + 40  # each replaced document has exactly one new version
