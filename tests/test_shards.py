"""Shard planning and the shard journal (graphtx/shards.py), the Ray encoder's sizing (pure logic: no Ray needed)."""

from __future__ import annotations

import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphtx.atomic import StagedDir, atomic_write_bytes
from graphtx.corpus.store import read_rows
from graphtx.errors import GraphtxError
from graphtx.ray_engine import actor_plan
from graphtx.shards import ShardJournal, plan_shards


def test_plan_shards_covers_every_row_once_in_order():
    assert plan_shards(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert plan_shards(8, 4) == [(0, 4), (4, 8)]
    assert plan_shards(0, 4) == []
    with pytest.raises(ValueError, match="at least 1"):
        plan_shards(10, 0)


def _finish(journal: ShardJournal, shard: int, data: bytes = b"rows") -> None:
    atomic_write_bytes(journal.path(shard, ".bin"), data)
    journal.commit(shard, [journal.path(shard, ".bin")], rows=len(data))


def test_journal_keeps_finished_shards_of_the_same_job(tmp_path):
    journal = ShardJournal(tmp_path / "j", {"input": "a", "size": (2, 3)})
    assert journal.open() == {}
    _finish(journal, 0)
    _finish(journal, 2)
    (tmp_path / "j" / "shard-000001.bin").write_bytes(b"half")  # written, never journaled (killed before its line)
    again = ShardJournal(tmp_path / "j", {"input": "a", "size": (2, 3)})  # tuples compare as they read back
    assert sorted(again.open()) == [0, 2]
    assert not (tmp_path / "j" / "shard-000001.bin").exists()
    assert again.done[2]["rows"] == 4


def test_journal_of_another_job_is_cleared(tmp_path):
    journal = ShardJournal(tmp_path / "j", {"input": "a"})
    journal.open()
    _finish(journal, 0)
    other = ShardJournal(tmp_path / "j", {"input": "b"})
    assert other.open() == {}
    assert sorted(p.name for p in (tmp_path / "j").iterdir()) == ["journal.jsonl", "key.json"]
    assert json.loads((tmp_path / "j" / "key.json").read_text()) == {"input": "b"}


def test_journal_redoes_a_shard_whose_file_changed_and_survives_a_torn_line(tmp_path):
    journal = ShardJournal(tmp_path / "j", {"input": "a"})
    journal.open()
    _finish(journal, 0)
    _finish(journal, 1)
    _finish(journal, 2)
    (tmp_path / "j" / "shard-000001.bin").write_bytes(b"truncated!")  # not the size the journal recorded
    with open(tmp_path / "j" / "journal.jsonl", "a") as f:
        f.write('{"shard": 3, "fil')  # a kill in the middle of a line
    again = ShardJournal(tmp_path / "j", {"input": "a"})
    assert sorted(again.open()) == [0, 2]
    _finish(again, 1)  # appended after the torn line was dropped: readable
    assert sorted(ShardJournal(tmp_path / "j", {"input": "a"}).open()) == [0, 1, 2]
    again.remove()
    assert not (tmp_path / "j").exists()


def test_peek_reads_the_finished_shards_and_writes_nothing(tmp_path):
    journal = ShardJournal(tmp_path / "j", {"input": "a"})
    assert journal.peek() == set()  # no folder yet: nothing, and none made
    assert not (tmp_path / "j").exists()
    journal.open()
    _finish(journal, 0)
    _finish(journal, 2)
    (tmp_path / "j" / "shard-000002.bin").write_bytes(b"changed!")  # not the size recorded: not finished
    (tmp_path / "j" / "stray.bin").write_bytes(b"x")  # open() would clear it; peek() leaves it
    with open(tmp_path / "j" / "journal.jsonl", "a") as f:
        f.write('{"shard": 3, "fil')
    before = {p.name: p.read_bytes() for p in (tmp_path / "j").iterdir()}
    assert ShardJournal(tmp_path / "j", {"input": "a"}).peek() == {0}
    assert ShardJournal(tmp_path / "j", {"input": "b"}).peek() == set()  # another job's shards are not this one's
    assert {p.name: p.read_bytes() for p in (tmp_path / "j").iterdir()} == before


def test_read_rows_reads_a_row_range_across_row_groups(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": list(range(25))}), path, row_group_size=7)
    assert [r["x"] for r in read_rows(path, 5, 16)] == list(range(5, 16))
    assert [r["x"] for r in read_rows(path, 21, 40)] == [21, 22, 23, 24]
    assert read_rows(path, 25, 30) == []
    assert [r["x"] for s, e in plan_shards(25, 4) for r in read_rows(path, s, e)] == list(range(25))


def test_resumable_staged_dir_keeps_its_partial_for_the_next_run(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        with StagedDir(out, "parse", ("a.txt",), resumable=True) as staged:
            staged.path("piece").write_text("done")
            raise KeyboardInterrupt
    assert (out / ".partial" / "piece").read_text() == "done"
    with StagedDir(out, "parse", ("a.txt",), resumable=True) as staged:
        assert staged.path("piece").read_text() == "done"  # continued
        staged.path("a.txt").write_text("A")
        staged.commit({"n": 1})
    assert (out / "a.txt").read_text() == "A" and not (out / ".partial").exists()
    with pytest.raises(KeyboardInterrupt):
        with StagedDir(out, "parse", ("a.txt",), resumable=True) as staged:
            staged.path("piece").write_text("again")
            raise KeyboardInterrupt
    with StagedDir(out, "parse", ("a.txt",)) as staged:  # a run that does not resume starts clean
        assert not staged.path("piece").exists()


def test_actor_plan_takes_gpus_when_the_cluster_has_them():
    assert actor_plan({"CPU": 2.0}, 2) == (2, 0.0, "cpu")
    assert actor_plan({"CPU": 2.0}, 4) == (2, 0.0, "cpu")  # an actor Ray cannot place would wait for ever
    assert actor_plan({"CPU": 32.0, "GPU": 4.0}, 2) == (2, 1.0, "cuda")  # one GPU an actor at most
    assert actor_plan({"CPU": 32.0, "GPU": 4.0}, 4) == (4, 1.0, "cuda")
    assert actor_plan({"CPU": 32.0, "GPU": 1.0}, 3) == (3, 0.33, "cuda")  # actors share the one GPU
    assert actor_plan({"CPU": 32.0, "GPU": 2.0}, 8, num_gpus=1.0) == (2, 1.0, "cuda")  # capped by the GPUs
    assert actor_plan({"CPU": 32.0, "GPU": 4.0}, 2, num_gpus=0.0) == (2, 0.0, "cpu")  # asked for CPU
    assert actor_plan({"CPU": 32.0, "GPU": 0.5}, 2) == (2, 0.0, "cpu")  # less than a whole GPU in the cluster
    with pytest.raises(GraphtxError, match="the Ray cluster has 0"):
        actor_plan({"CPU": 8.0}, 2, num_gpus=1.0)


@pytest.mark.timeout(120)
def test_the_engine_modules_do_not_import_ray():
    import subprocess

    code = (
        "import sys, graphtx.cli, graphtx.ray_engine, graphtx.shards, graphtx.graphs.parse, graphtx.model.embed, graphtx.index.build, graphtx.train.ray_launch; "
        "sys.exit(1 if 'ray' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=110).returncode == 0
