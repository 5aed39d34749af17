"""--engine ray against --engine local: the same graphs directory and the same index, on a local Ray (make test-slow)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphtx.cli import main
from graphtx.config import IndexConfig, ParseConfig
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter
from graphtx.graphs.parse import iter_graphs, parse_corpus

pytest.importorskip(
    "ray", reason="Ray is the optional extra: pip install 'graphtx[ray]' (its tests run in make test-slow)"
)
pytestmark = pytest.mark.slow

CLAIMS = [
    "A snowthrower comprising: an auger housing; and a chute mounted on the auger housing.",
    "A battery pack comprising a plurality of cells and a cooling plate in contact with the cells.",
    "A bicycle comprising a frame, a chain and a rear wheel driven by the chain.",
]


@pytest.fixture()
def corpus(tmp_path):
    out = tmp_path / "corpus"
    with CorpusWriter(out) as w:
        for i in range(9):
            w.add_document(
                PatentDocument(
                    f"US-{i}-B1",
                    "test",
                    "-",
                    title=f"Doc {i}",
                    claims=(Claim(1, CLAIMS[i % 3], True),),
                    description=f"The housing {i} is rotatable.\nAn engine drives the auger.",
                ),
                (),
                "-",
                str(i),
            )
        w.add_document(
            PatentDocument("EMPTY-9", "test", "-"), (), "-", "9"
        )  # no text: listed in errors.jsonl by both engines
        w.add_document(PatentDocument("DE-10", "test", "-", lang="de", abstract="Ein Akku mit Zellen."), (), "-", "10")
    return out


def _manifest(graphs_dir):
    manifest = json.loads((graphs_dir / "manifest.json").read_text())
    manifest.pop("seconds"), manifest.pop("manifest_sha256")  # the time taken, and the seal over it
    return manifest


@pytest.mark.timeout(240)
def test_parse_on_ray_writes_the_same_graphs_directory(corpus, tmp_path, ray_local):
    local = parse_corpus(corpus, tmp_path / "local", ParseConfig(workers=1), progress=False)
    on_ray = parse_corpus(corpus, tmp_path / "ray", ParseConfig(workers=2, shard_size=3), progress=False, engine="ray")
    assert (
        (on_ray.documents, on_ray.graphs, on_ray.skipped)
        == (local.documents, local.graphs, local.skipped)
        == (9, 27, 2)
    )
    assert list(iter_graphs(tmp_path / "ray")) == list(
        iter_graphs(tmp_path / "local")
    )  # same ids, same graphs, same order
    assert (tmp_path / "ray" / "graphs.parquet").read_bytes() == (tmp_path / "local" / "graphs.parquet").read_bytes()
    assert (tmp_path / "ray" / "errors.jsonl").read_text() == (tmp_path / "local" / "errors.jsonl").read_text()
    cfg = dict(_manifest(tmp_path / "local")["config"], workers=2, shard_size=3)
    assert _manifest(tmp_path / "ray") == dict(_manifest(tmp_path / "local"), config=cfg)  # checksums included
    assert not (tmp_path / "ray" / ".partial").exists()


@pytest.mark.timeout(240)
def test_cli_parse_engine_ray(corpus, tmp_path, ray_local, capsys):
    assert (
        main(["parse", str(corpus), "--out", str(tmp_path / "g"), "--engine", "ray", "--workers", "2", "--json"]) == 3
    )  # skips -> 3
    assert json.loads(capsys.readouterr().out)["graphs"] == 27


@pytest.mark.timeout(240)
def test_index_on_ray_gives_the_same_ids_and_search_results(tmp_path, ray_local):
    from graphtx.index.build import build_index
    from graphtx.index.search import Index
    from graphtx.index.store import IndexStore
    from tests.index.fixtures import doc_id, make_corpus, make_graphs, make_model

    corpus = make_corpus(tmp_path, range(60))
    graphs, model = make_graphs(tmp_path, range(60), corpus=corpus), make_model(tmp_path)
    cfg = IndexConfig(chunk_size=8, shard_size=25)
    local = build_index(model, graphs, tmp_path / "local", cfg, progress=False)
    on_ray = build_index(model, graphs, tmp_path / "ray", cfg, progress=False, engine="ray", ray_workers=2)
    assert (on_ray.added, on_ray.count, on_ray.shards) == (local.added, local.count, local.shards) == (60, 60, 3)
    a, b = IndexStore(tmp_path / "local").read_versions(), IndexStore(tmp_path / "ray").read_versions()
    assert a.column("doc_id").to_pylist() == b.column("doc_id").to_pylist()
    assert a.column("faiss_id").to_pylist() == b.column("faiss_id").to_pylist()
    one, two = Index.open(tmp_path / "local"), Index.open(tmp_path / "ray")
    for i in (0, 13, 59):
        x, y = one.search(doc_id=doc_id(i), k=10), two.search(doc_id=doc_id(i), k=10)
        assert [h.doc_id for h in x] == [h.doc_id for h in y]
        np.testing.assert_allclose([h.score for h in x], [h.score for h in y], atol=1e-6)


@pytest.mark.timeout(240)
def test_encode_on_ray_writes_the_same_vectors(tmp_path, ray_local):
    from graphtx.model.embed import read_vectors
    from tests.index.fixtures import make_graphs, make_model

    graphs, model = make_graphs(tmp_path, range(40)), make_model(tmp_path)
    common = [
        "encode",
        "--model",
        str(model),
        "--graphs",
        str(graphs),
        "--batch-size",
        "2",
        "--quiet",
    ]  # 32 graphs a chunk: 2 chunks
    assert main([*common, "--out", str(tmp_path / "local.parquet")]) == 0
    assert main([*common, "--out", str(tmp_path / "ray.parquet"), "--engine", "ray", "--ray-workers", "2"]) == 0
    (ids_a, va, meta_a), (ids_b, vb, meta_b) = (
        read_vectors(tmp_path / "local.parquet"),
        read_vectors(tmp_path / "ray.parquet"),
    )
    assert ids_a == ids_b and len(ids_a) == 40 and meta_a == meta_b
    np.testing.assert_array_equal(va, vb)


# --- resumable by shard -----------------------------------------------------------------


def _interrupt_after(monkeypatch, cls, name: str, n: int) -> list:
    """Make ``cls.name`` raise KeyboardInterrupt (Ctrl-C) right after its ``n``-th call completes; returns the
    first arguments of every call (shard or part numbers). Test-only: nothing a user can reach."""
    calls: list = []
    original = getattr(cls, name)

    def wrapped(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        calls.append(args[0])
        if len(calls) == n:
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(cls, name, wrapped)
    return calls


@pytest.mark.timeout(300)
def test_parse_on_ray_resumes_after_an_interruption_and_redoes_only_unfinished_shards(
    corpus, tmp_path, ray_local, monkeypatch
):
    from graphtx.shards import ShardJournal

    local = parse_corpus(corpus, tmp_path / "local", ParseConfig(workers=1), progress=False)
    cfg = ParseConfig(workers=2, shard_size=2)  # 11 documents: 6 shards
    first = _interrupt_after(monkeypatch, ShardJournal, "commit", 2)
    with pytest.raises(KeyboardInterrupt):
        parse_corpus(corpus, tmp_path / "ray", cfg, progress=False, engine="ray")
    assert len(first) == 2 and not (tmp_path / "ray" / "manifest.json").exists()
    assert len(list((tmp_path / "ray" / ".partial" / "shards").glob("shard-*.pkl"))) == 2  # kept for the next run
    monkeypatch.undo()
    second = _interrupt_after(monkeypatch, ShardJournal, "commit", 99)
    report = parse_corpus(corpus, tmp_path / "ray", cfg, progress=False, engine="ray")
    assert sorted(first + second) == list(range(6)) and not set(first) & set(second)  # each shard parsed once
    assert (report.documents, report.graphs, report.skipped) == (local.documents, local.graphs, local.skipped)
    assert (tmp_path / "ray" / "graphs.parquet").read_bytes() == (tmp_path / "local" / "graphs.parquet").read_bytes()
    assert (tmp_path / "ray" / "errors.jsonl").read_text() == (tmp_path / "local" / "errors.jsonl").read_text()
    assert not (tmp_path / "ray" / ".partial").exists()


@pytest.mark.timeout(300)
def test_encode_on_ray_resumes_after_an_interruption(tmp_path, ray_local, monkeypatch, capsys):
    from graphtx.model.embed import read_vectors
    from graphtx.shards import ShardJournal
    from tests.index.fixtures import make_graphs, make_model

    graphs, model = make_graphs(tmp_path, range(40)), make_model(tmp_path)
    common = [
        "encode",
        "--model",
        str(model),
        "--graphs",
        str(graphs),
        "--batch-size",
        "1",
        "--quiet",
    ]  # 16 graphs a chunk: 3 shards
    assert main([*common, "--out", str(tmp_path / "local.parquet")]) == 0
    first = _interrupt_after(monkeypatch, ShardJournal, "commit", 1)
    assert (
        main([*common, "--out", str(tmp_path / "ray.parquet"), "--engine", "ray", "--ray-workers", "2"]) == 1
    )  # Ctrl-C
    assert "the same command continues" in capsys.readouterr().err
    assert not (tmp_path / "ray.parquet").exists() and (tmp_path / ".ray.parquet.shards" / "journal.jsonl").exists()
    monkeypatch.undo()
    second = _interrupt_after(monkeypatch, ShardJournal, "commit", 99)
    assert main([*common, "--out", str(tmp_path / "ray.parquet"), "--engine", "ray", "--ray-workers", "2"]) == 0
    assert sorted(first + second) == [0, 1, 2] and not set(first) & set(second)
    (ids_a, va, meta_a), (ids_b, vb, meta_b) = (
        read_vectors(tmp_path / "local.parquet"),
        read_vectors(tmp_path / "ray.parquet"),
    )
    assert ids_a == ids_b and len(ids_a) == 40 and meta_a == meta_b
    np.testing.assert_array_equal(va, vb)
    assert not (tmp_path / ".ray.parquet.shards").exists()


@pytest.mark.timeout(300)
def test_index_on_ray_resumes_after_an_interruption(tmp_path, ray_local, monkeypatch):
    from graphtx.index.build import build_index
    from graphtx.index.store import IndexStore
    from tests.index.fixtures import make_corpus, make_graphs, make_model

    corpus = make_corpus(tmp_path, range(40))
    graphs, model = make_graphs(tmp_path, range(40), corpus=corpus), make_model(tmp_path)
    cfg = IndexConfig(chunk_size=8, shard_size=16)
    build_index(model, graphs, tmp_path / "local", cfg, progress=False)
    first = _interrupt_after(monkeypatch, IndexStore, "commit_part", 2)
    with pytest.raises(KeyboardInterrupt):
        build_index(model, graphs, tmp_path / "ray", cfg, progress=False, engine="ray", ray_workers=2)
    monkeypatch.undo()
    second = _interrupt_after(monkeypatch, IndexStore, "commit_part", 99)
    report = build_index(model, graphs, tmp_path / "ray", cfg, progress=False, engine="ray", ray_workers=2)
    assert report.resumed and sorted(first + second) == [0, 1, 2, 3, 4] and report.added == 24  # parts 2..4 only
    a, b = IndexStore(tmp_path / "local").read_versions(), IndexStore(tmp_path / "ray").read_versions()
    assert a.column("doc_id").to_pylist() == b.column("doc_id").to_pylist()
    assert a.column("faiss_id").to_pylist() == b.column("faiss_id").to_pylist()


# --- sharded index build -----------------------------------------------------------------


@pytest.mark.timeout(300)
@pytest.mark.parametrize("index_type", ["ivfpq", "hnsw"])
def test_index_on_ray_fills_the_same_shards_and_merges_ivfpq_on_disk(tmp_path, ray_local, index_type):
    from graphtx.index.build import build_index
    from graphtx.index.finalize import verify_index
    from graphtx.index.search import Index
    from graphtx.index.store import IndexStore
    from tests.index.fixtures import doc_id, make_corpus, make_graphs, make_model

    corpus = make_corpus(tmp_path, range(60))
    graphs, model = make_graphs(tmp_path, range(60), corpus=corpus), make_model(tmp_path)
    cfg = IndexConfig(
        index_type=index_type, pq_nbits=4, ivf_nlist=4, ivf_nprobe=4, chunk_size=8, shard_size=16, bm25=False
    )
    build_index(model, graphs, tmp_path / "local", cfg, progress=False)
    build_index(model, graphs, tmp_path / "ray", cfg, progress=False, engine="ray", ray_workers=2)
    a, b = IndexStore(tmp_path / "local").manifest(), IndexStore(tmp_path / "ray").manifest()
    assert (
        len(a["shards"]) == 4
        and a["shards"] == b["shards"]
        and a["trained"] == b["trained"]
        and a["ids_file"] == b["ids_file"]
    )
    for s in a["shards"]:  # each shard written by a Ray task is the local engine's file, byte for byte
        assert (tmp_path / "ray" / "shards" / s["file"]).read_bytes() == (
            tmp_path / "local" / "shards" / s["file"]
        ).read_bytes()

    def hits(d):
        return [
            [(h.doc_id, round(h.score, 5)) for h in Index.open(d).search(doc_id=doc_id(i), k=10)] for i in (0, 21, 59)
        ]

    assert hits(tmp_path / "ray") == hits(tmp_path / "local")
    if index_type == "ivfpq":
        (tmp_path / "tiny.yaml").write_text(
            "index:\n  index_type: ivfpq\n  pq_nbits: 4\n  ivf_nlist: 4\n  ivf_nprobe: 4\n  bm25: false\n"
        )
        assert (
            main(
                [
                    "index",
                    "--model",
                    str(model),
                    "--graphs",
                    str(graphs),
                    "--out",
                    str(tmp_path / "merged"),
                    "--config",
                    str(tmp_path / "tiny.yaml"),
                    "--chunk-size",
                    "8",
                    "--shard-size",
                    "16",
                    "--engine",
                    "ray",
                    "--merge-ondisk",
                    "--quiet",
                ]
            )
            == 0
        )
        assert hits(tmp_path / "merged") == hits(tmp_path / "local")
        merged = IndexStore(tmp_path / "merged").manifest()
        assert len(merged["shards"]) == 1 and merged["shards"][0]["ivfdata"] and merged["count"] == 60
        verify_index(tmp_path / "merged")


@pytest.mark.timeout(300)
def test_parse_on_ray_killed_outright_continues_from_its_journal(corpus, tmp_path, ray_local, monkeypatch):
    """kill -9 of the driver (and its local Ray) after some shards: the same command finishes the rest, graphs as local."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import psutil

    from graphtx.shards import ShardJournal

    local = parse_corpus(corpus, tmp_path / "local", ParseConfig(workers=1), progress=False)
    out = tmp_path / "ray"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]), OMP_NUM_THREADS="1")
    env.pop("RAY_ADDRESS", None)
    cmd = [
        sys.executable,
        "-m",
        "graphtx",
        "parse",
        str(corpus),
        "--out",
        str(out),
        "--engine",
        "ray",
        "--workers",
        "2",
        "--shard-size",
        "1",
        "--cache",
        "",  # its shards in .partial/shards/ (by default they go to the parse cache)
        "--quiet",
    ]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = out / ".partial" / "shards" / "journal.jsonl"
    try:
        deadline = time.time() + 200
        while time.time() < deadline and proc.poll() is None:
            if journal.exists() and len(journal.read_text().splitlines()) >= 2:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the parse finished before it could be killed"
    finally:
        family = (
            [proc.pid, *(p.pid for p in psutil.Process(proc.pid).children(recursive=True))]
            if proc.poll() is None
            else [proc.pid]
        )
        for pid in family:  # the driver and the local Ray it started, by their ids
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=30)
    done_before = set()
    for line in journal.read_text().splitlines():
        try:
            done_before.add(json.loads(line)["shard"])
        except ValueError:  # a line the kill cut short: that shard is redone
            break
    assert len(done_before) >= 2 and not (out / "manifest.json").exists()
    again = _interrupt_after(monkeypatch, ShardJournal, "commit", 99)
    report = parse_corpus(corpus, out, ParseConfig(workers=2, shard_size=1), progress=False, engine="ray")
    assert not set(again) & done_before and sorted([*again, *done_before]) == list(
        range(11)
    )  # each shard parsed once in all
    assert (report.documents, report.graphs, report.skipped) == (local.documents, local.graphs, local.skipped)
    assert (out / "graphs.parquet").read_bytes() == (tmp_path / "local" / "graphs.parquet").read_bytes()
    assert (out / "errors.jsonl").read_text() == (tmp_path / "local" / "errors.jsonl").read_text()


# --- an actor killed mid-task (issue 50): the job ends with every result once, and says what it retried -----------


def _slow_square(state, x, kill_at, marker, delay):
    """x * x after a short sleep; the task ``kill_at`` SIGKILLs its own actor process ``delay`` s in, once (``marker``)."""
    import os
    import signal
    import time
    from pathlib import Path

    time.sleep(delay)
    if x == kill_at and not Path(marker).exists():
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return x * x


def _no_state(device):
    return None


def _square_ordered(state, item):
    x, kill_at, marker, delay = item
    return _slow_square(state, x, kill_at, marker, delay)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", range(10))
def test_map_unordered_with_an_actor_killed_gives_every_result_once(seed, tmp_path, ray_local):
    from graphtx.ray_engine import map_unordered

    rng = np.random.default_rng(seed)
    kill_at, delay = int(rng.integers(0, 8)), float(rng.uniform(0.0, 0.2))  # a seeded task, at a seeded moment
    marker = str(tmp_path / "killed")
    tasks = [(x, (x, kill_at, marker, delay)) for x in range(8)]
    retried: dict = {}
    got = dict(map_unordered(tasks, _no_state, (), _slow_square, workers=2, retried=retried))
    assert got == {x: x * x for x in range(8)}  # every task's result, once
    # the killed task ran again, and so did the one queued behind it on the same actor (ahead=2), each once
    assert retried[kill_at] == 1 and len(retried) <= 2 and set(retried.values()) == {1}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", range(10))
def test_map_ordered_with_an_actor_killed_keeps_the_order(seed, tmp_path, ray_local):
    from graphtx.ray_engine import map_ordered

    rng = np.random.default_rng(100 + seed)
    kill_at, delay = int(rng.integers(0, 8)), float(rng.uniform(0.0, 0.2))
    marker = str(tmp_path / "killed")
    items = [(x, kill_at, marker, delay) for x in range(8)]
    retried: dict = {}
    got = list(map_ordered(iter(items), _no_state, (), _square_ordered, workers=2, num_gpus=0, retried=retried))
    assert [r for _, r in got] == [x * x for x in range(8)]  # every item once, in input order
    assert retried[kill_at] == 1 and len(retried) <= 2 and set(retried.values()) == {1}


class _ActorKiller:
    """From outside, as a pre-empted node would: SIGKILL one Ray actor process of a stage while it runs a task, at a
    seeded moment (the first busy actor seen ``delay`` s or more after the first task was seen running), once.
    ``killed``: the PID, or None."""

    def __init__(self, seed: int):
        import threading

        self.delay = float(np.random.default_rng(seed).uniform(0.0, 0.05))
        self.killed: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    @staticmethod
    def _actors() -> dict[int, str]:
        """{pid: process title} of the stage actors (``ray::_StageActor`` idle, ``ray::_StageActor.run`` busy)."""
        import os

        found = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    title = open(f"/proc/{name}/cmdline", "rb").read().split(b"\0")[0].decode(errors="replace")
                except OSError:
                    continue
                if title.startswith("ray::_StageActor"):
                    found[int(name)] = title
        return found

    def _watch(self) -> None:
        import os
        import signal
        import time

        started = None  # when the first task was seen running
        while not self._stop.is_set():
            busy = [p for p, t in self._actors().items() if t.endswith(".run")]
            if busy and started is None:
                started = time.time()
            if busy and time.time() - started >= self.delay:
                # a busy actor only: one killed between tasks has nothing to run again (on a quiet machine a task
                # can end within the delay; an idle actor killed then tested nothing of the retry)
                os.kill(busy[0], signal.SIGKILL)
                self.killed = busy[0]
                return
            time.sleep(0.001)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", range(10))
def test_parse_on_ray_with_an_actor_killed(seed, corpus, tmp_path, ray_local, caplog):
    local = parse_corpus(corpus, tmp_path / "local", ParseConfig(workers=1), progress=False)
    with _ActorKiller(seed) as killer:
        on_ray = parse_corpus(
            corpus, tmp_path / "ray", ParseConfig(workers=2, shard_size=1), progress=False, engine="ray"
        )
    assert killer.killed is not None, "no actor was running a shard to kill"
    assert (on_ray.documents, on_ray.graphs, on_ray.skipped) == (local.documents, local.graphs, local.skipped)
    assert (tmp_path / "ray" / "graphs.parquet").read_bytes() == (tmp_path / "local" / "graphs.parquet").read_bytes()
    assert (tmp_path / "ray" / "errors.jsonl").read_text() == (tmp_path / "local" / "errors.jsonl").read_text()
    assert any("died during task" in r.message for r in caplog.records)  # the job says what it ran again


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", range(10))
def test_encode_on_ray_with_an_actor_killed(seed, tmp_path, ray_local, caplog):
    from graphtx.model.embed import read_vectors
    from tests.index.fixtures import make_graphs, make_model

    graphs, model = make_graphs(tmp_path, range(40)), make_model(tmp_path)
    common = ["encode", "--model", str(model), "--graphs", str(graphs), "--batch-size", "2", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "local.parquet")]) == 0
    with _ActorKiller(seed) as killer:
        assert main([*common, "--out", str(tmp_path / "ray.parquet"), "--engine", "ray", "--ray-workers", "2"]) == 0
    assert killer.killed is not None, "no actor was running a chunk to kill"
    (ids_a, va, meta_a), (ids_b, vb, meta_b) = (
        read_vectors(tmp_path / "local.parquet"),
        read_vectors(tmp_path / "ray.parquet"),
    )
    assert ids_a == ids_b and meta_a == meta_b
    np.testing.assert_allclose(va, vb, atol=1e-6)
    assert any("died during task" in r.message for r in caplog.records)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", range(10))
def test_index_on_ray_with_an_actor_killed(seed, tmp_path, ray_local, caplog):
    from graphtx.index.build import build_index
    from graphtx.index.search import Index
    from tests.index.fixtures import doc_id, make_corpus, make_graphs, make_model

    corpus = make_corpus(tmp_path, range(60))
    graphs, model = make_graphs(tmp_path, range(60), corpus=corpus), make_model(tmp_path)
    cfg = IndexConfig(chunk_size=4, shard_size=25)
    build_index(model, graphs, tmp_path / "local", cfg, progress=False)
    with _ActorKiller(seed) as killer:
        on_ray = build_index(model, graphs, tmp_path / "ray", cfg, progress=False, engine="ray", ray_workers=2)
    assert killer.killed is not None, "no actor was running a part to kill"
    assert (on_ray.added, on_ray.count) == (60, 60)
    one, two = Index.open(tmp_path / "local"), Index.open(tmp_path / "ray")
    for i in (0, 13, 59):
        x, y = one.search(doc_id=doc_id(i), k=10), two.search(doc_id=doc_id(i), k=10)
        assert [h.doc_id for h in x] == [h.doc_id for h in y]
        np.testing.assert_allclose([h.score for h in x], [h.score for h in y], atol=1e-6)
    assert any("died during task" in r.message for r in caplog.records)


# --- the driver killed during the merge of index shards (issue 50) ----------------------------------------------


def _kill_family(proc) -> None:
    """SIGKILL a driver and every process it started (its local Ray), by their ids."""
    import os
    import signal

    import psutil

    family = [proc.pid]
    if proc.poll() is None:
        family += [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
    for pid in family:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=30)


@pytest.mark.timeout(400)
@pytest.mark.parametrize("seed", range(10))
def test_index_driver_killed_during_the_merge_on_disk_finishes_on_the_same_command(seed, tmp_path, ray_local):
    """kill -9 of `graphtx index --engine ray --merge-ondisk` once its merge has begun (a seeded moment after the merge's
    temporary folder appears): the same command finishes, the index opens with its checksums holding, and searches as
    a clean run's."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from graphtx.index.finalize import verify_index
    from graphtx.index.search import Index
    from tests.index.fixtures import doc_id, make_corpus, make_graphs, make_model

    corpus = make_corpus(tmp_path, range(60))
    graphs, model = make_graphs(tmp_path, range(60), corpus=corpus), make_model(tmp_path)
    (tmp_path / "tiny.yaml").write_text(
        "index:\n  index_type: ivfpq\n  pq_nbits: 4\n  ivf_nlist: 4\n  ivf_nprobe: 4\n  bm25: false\n"
    )
    args = ["index", "--model", str(model), "--graphs", str(graphs), "--config", str(tmp_path / "tiny.yaml")]
    args += ["--chunk-size", "8", "--shard-size", "16", "--engine", "ray", "--merge-ondisk", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "clean")]) == 0
    out = tmp_path / "killed"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]), OMP_NUM_THREADS="1")
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphtx", *args, "--out", str(out)],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    delay = float(np.random.default_rng(seed).uniform(0.0, 0.002))
    merging = False
    try:
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            shards = out / "shards"
            if shards.is_dir() and any(p.name.startswith(".merge-") for p in os.scandir(shards)):
                time.sleep(delay)
                merging = True
                break
    finally:
        _kill_family(proc)
    assert merging, "the merge ended before the watcher saw it begin: nothing was killed mid-merge"
    assert main([*args, "--out", str(out)]) == 0  # the same command
    assert verify_index(out)["files"] > 0  # every file its manifest records, sizes and sha256 (raises on damage)
    assert not [p for p in (out / "shards").iterdir() if p.name.startswith(".merge-")]  # nothing half-merged left
    one, two = Index.open(tmp_path / "clean"), Index.open(out)
    assert one.manifest["merged_ondisk"] == two.manifest["merged_ondisk"]
    for i in (0, 21, 59):
        x, y = one.search(doc_id=doc_id(i), k=10, ranker="dense"), two.search(doc_id=doc_id(i), k=10, ranker="dense")
        assert [(h.doc_id, round(h.score, 5)) for h in x] == [(h.doc_id, round(h.score, 5)) for h in y]
