"""Parse under faults: interrupted and disk-full re-runs, Ctrl-C / SIGTERM / kill -9 of `parse --workers 2`."""

from __future__ import annotations

import errno
import signal
from pathlib import Path

import pytest

from graphtx.cli import main
from graphtx.corpus import store
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter
from graphtx.graphs import parse
from graphtx.graphs.parse import count_graphs, graphs_path

from ..faults import KILL, signal_during, snapshot

DEMO = Path(__file__).resolve().parents[2] / "graphtx" / "data" / "demo" / "us_grants.parquet"


def _corpus(out: Path, n: int) -> Path:
    with CorpusWriter(out) as w:
        for i in range(n):
            claim = f"A snowthrower {i} comprising: an auger housing; and a chute mounted on the auger housing."
            w.add_document(
                PatentDocument(
                    f"US-{i}-B1",
                    "test",
                    "-",
                    title="Snowthrower",
                    claims=(Claim(1, claim, True),),
                    description="The chute is rotatable.\nAn engine drives the auger.",
                ),
                (),
                "-",
                str(i),
            )
    return out


@pytest.fixture()
def finished(tmp_path):
    """A graphs directory holding a complete earlier run, and a corpus to parse again into it."""
    corpus = _corpus(tmp_path / "corpus", 2)
    graphs = tmp_path / "graphs"
    assert main(["parse", str(corpus), "--out", str(graphs), "--quiet"]) == 0
    return corpus, graphs


def test_an_interrupted_reparse_leaves_the_previous_graphs_byte_identical(finished, tmp_path, monkeypatch, capsys):
    _, graphs = finished
    before = snapshot(graphs)
    bigger = _corpus(tmp_path / "bigger", 6)
    calls = []
    real = parse._build_one

    def build_then_ctrl_c(doc):
        calls.append(doc.id)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(doc)

    monkeypatch.setattr(parse, "_build_one", build_then_ctrl_c)
    assert main(["parse", str(bigger), "--out", str(graphs), "--quiet"]) == 1
    assert "interrupted" in capsys.readouterr().err
    assert snapshot(graphs) == before


def test_a_full_disk_during_parse_exits_1_keeps_the_previous_graphs_and_a_rerun_completes(
    finished, tmp_path, monkeypatch, capsys
):
    _, graphs = finished
    before = snapshot(graphs)
    bigger = _corpus(tmp_path / "bigger", 6)

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(store.TableWriter, "close", full)
        assert main(["parse", str(bigger), "--out", str(graphs), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "disk full at" in err and str(graphs) in err and "Traceback" not in err
    assert snapshot(graphs) == before
    assert main(["parse", str(bigger), "--out", str(graphs), "--quiet"]) == 0
    assert count_graphs(graphs) == 6 * 3


def test_parse_of_a_missing_corpus_writes_nothing(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "nothing"), "--out", str(tmp_path / "graphs"), "--quiet"]) == 2
    assert "run `graphtx ingest` first" in capsys.readouterr().err
    assert not (tmp_path / "graphs").exists()


# --- Ctrl-C, SIGTERM, kill -9 of `graphtx parse --workers 2` --------------------------------


@pytest.fixture(scope="module")
def demo_corpus(tmp_path_factory):
    """The 371 demo grants: two workers parse them for well over the seconds a test waits."""
    out = tmp_path_factory.mktemp("demo") / "corpus"
    assert main(["ingest", str(DEMO), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig, group", [(signal.SIGINT, True), (signal.SIGTERM, False)], ids=["ctrl-c", "sigterm"])
def test_interrupting_parse_with_workers_ends_within_seconds_leaving_the_previous_graphs(
    finished, demo_corpus, sig, group
):
    _, graphs = finished
    before = snapshot(graphs)
    run = signal_during(
        ["parse", str(demo_corpus), "--out", str(graphs), "--workers", "2", "--quiet"],
        sig,
        ready=graphs / ".partial",
        group=group,
    )
    assert run.was_working
    assert run.returncode == 1 and run.seconds < 10, run
    assert "interrupted" in run.stderr and "Traceback" not in run.stderr
    assert run.left == [], f"processes left behind: {run.left}"
    assert snapshot(graphs) == before


@pytest.mark.timeout(180)
def test_kill_9_of_parse_leaves_no_worker_behind(tmp_path, demo_corpus):
    graphs = tmp_path / "graphs"
    run = signal_during(
        ["parse", str(demo_corpus), "--out", str(graphs), "--workers", "2", "--quiet"],
        KILL,
        ready=graphs / ".partial",
        group=False,
    )
    assert run.was_working and run.returncode == -KILL
    assert run.left == [], f"orphaned workers: {run.left}"
    with pytest.raises(FileNotFoundError, match="was interrupted before it completed"):
        graphs_path(graphs)
