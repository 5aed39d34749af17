"""Ingest under faults: interrupted and disk-full re-runs, Ctrl-C / SIGTERM / kill -9 of `ingest --workers 2`,
every input accounted, damaged archives."""

from __future__ import annotations

import errno
import gzip
import json
import os
import signal
import zipfile
import zlib

import pytest

from graphtx.cli import main
from graphtx.config import IngestConfig
from graphtx.corpus import store
from graphtx.corpus.ingest import ingest
from graphtx.corpus.store import iter_documents, read_errors

from ..conftest import FIXTURES
from ..faults import KILL, signal_during, small_tmpfs, snapshot

US_XML = FIXTURES / "us_grants_small.xml"


def jsonl_docs(n: int) -> bytes:
    lines = [
        json.dumps(
            {
                "id": f"T-{i:04d}",
                "title": f"Widget {i}",
                "abstract": f"A widget number {i} with a frame and a motor.",
                "claims": f"1. A widget comprising a frame and a motor {i}.",
            }
        )
        for i in range(n)
    ]
    return ("\n".join(lines) + "\n").encode()


def manifest(directory) -> dict:
    return json.loads((directory / "manifest.json").read_text())


def assert_counts_add_up(directory) -> dict:
    m = manifest(directory)
    assert m["records_seen"] == m["records_written"] + m["skipped"]
    assert m["skipped"] == len(read_errors(directory))
    return m


@pytest.fixture
def finished(tmp_path):
    """A corpus directory holding a complete earlier run."""
    out = tmp_path / "corpus"
    assert main(["ingest", str(US_XML), "--out", str(out), "--quiet"]) in (0, 3)
    return out


# --- re-runs never destroy good output ----------------------------------------------------


def test_an_interrupted_rerun_leaves_the_previous_corpus_byte_identical(finished, tmp_path, monkeypatch, capsys):
    before = snapshot(finished)
    (tmp_path / "more.jsonl").write_bytes(jsonl_docs(30))
    real_add = store.CorpusWriter.add_document
    calls = []

    def add_then_ctrl_c(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real_add(self, *args, **kwargs)

    monkeypatch.setattr(store.CorpusWriter, "add_document", add_then_ctrl_c)
    code = main(["ingest", str(tmp_path / "more.jsonl"), "--out", str(finished), "--quiet"])
    assert code == 1 and "interrupted" in capsys.readouterr().err
    assert snapshot(finished) == before  # no manifest for a partial corpus, no half-written file, no partial left


def test_a_full_disk_during_ingest_exits_1_keeps_the_previous_corpus_and_a_rerun_completes(
    finished, tmp_path, monkeypatch, capsys
):
    before = snapshot(finished)
    (tmp_path / "more.jsonl").write_bytes(jsonl_docs(30))

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(store.TableWriter, "flush", full)
        code = main(["ingest", str(tmp_path / "more.jsonl"), "--out", str(finished), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "disk full at" in err and str(finished) in err and "Traceback" not in err
    assert snapshot(finished) == before
    assert main(["ingest", str(tmp_path / "more.jsonl"), "--out", str(finished), "--quiet"]) == 0
    assert manifest(finished)["documents"] == 30 == len(list(iter_documents(finished)))


def test_a_real_full_disk_during_ingest_keeps_the_previous_corpus(tmp_path, capsys):
    demo = (
        FIXTURES.parents[1] / "graphtx" / "data" / "demo" / "us_grants.parquet"
    )  # 1.9 MB ingested: more than the disk
    with small_tmpfs(tmp_path / "disk", "512k") as disk:
        out = disk / "corpus"
        assert main(["ingest", str(US_XML), "--out", str(out), "--quiet"]) == 3
        before = snapshot(out)
        assert main(["ingest", str(demo), "--out", str(out), "--quiet"]) == 1
        err = capsys.readouterr().err
        assert f"disk full at {out}" in err and "Traceback" not in err
        assert (
            snapshot(out) == before and not (out / ".partial").exists()
        )  # the partial is removed: the space is free again
        assert (
            main(["ingest", str(US_XML), str(FIXTURES / "docs_with_bad_lines.jsonl"), "--out", str(out), "--quiet"])
            == 3
        )


def test_a_missing_input_path_is_an_error_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "corpus"
    assert main(["ingest", str(US_XML), str(tmp_path / "no" / "such"), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no such file or directory" in err and str(tmp_path / "no" / "such") in err
    assert not out.exists()


# --- every input accounted -----------------------------------------------------------------


def test_zip_members_are_detected_one_by_one_and_a_bad_crc_member_is_listed(tmp_path):
    payload = jsonl_docs(5)
    path = tmp_path / "mixed.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.write(US_XML, "ipg110301.xml")  # USPTO XML first: it used to decide the format of every member
        z.writestr("docs.jsonl", payload)
        z.writestr("damaged.jsonl", payload.replace(b"T-", b"D-"))
    data = bytearray(path.read_bytes())
    at = data.index(b"D-0002")
    data[at + 2] ^= 0x01  # one flipped bit inside the stored member: its CRC no longer matches
    path.write_bytes(bytes(data))

    report = ingest([path], tmp_path / "c", IngestConfig(), progress=False)
    ids = [d.id for d in iter_documents(tmp_path / "c")]
    plain = ingest([US_XML], tmp_path / "plain", IngestConfig(), progress=False)
    assert sum(i.startswith("T-") for i in ids) == 5  # the JSONL member, read as JSONL
    assert sum(i.startswith("US-") for i in ids) == plain.documents
    assert not any(i.startswith("D-") for i in ids)  # nothing of the damaged member is written
    damaged = [e for e in read_errors(tmp_path / "c") if e["file"].endswith("!damaged.jsonl")]
    assert len(damaged) == 1 and "damaged archive member" in damaged[0]["reason"] and "CRC" in damaged[0]["reason"]
    assert report.records_seen == report.records_written + report.skipped
    assert_counts_add_up(tmp_path / "c")


def test_unreadable_folders_and_dangling_links_are_listed_with_the_reason(tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "locked").mkdir(parents=True)
    (src / "locked" / "docs.jsonl").write_bytes(jsonl_docs(3))
    (src / "docs.jsonl").write_bytes(jsonl_docs(4))
    (src / "gone.jsonl").symlink_to(tmp_path / "deleted.jsonl")
    (src / "elsewhere").symlink_to(src / "locked", target_is_directory=True)
    real_scandir = os.scandir

    def scandir(path="."):  # root reads any folder, so the permission error is injected
        if not isinstance(path, int) and os.fspath(path).endswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report = ingest([src], tmp_path / "c", IngestConfig(), progress=False)
    reasons = {e["file"]: e["reason"] for e in read_errors(tmp_path / "c")}
    assert reasons[str(src / "locked")].startswith("unreadable folder: Permission denied")
    assert reasons[str(src / "gone.jsonl")] == f"dangling symbolic link to {tmp_path / 'deleted.jsonl'}"
    assert reasons[str(src / "elsewhere")].startswith("symbolic link to a folder, not followed")
    assert report.documents == 4 and report.skipped == 3
    m = assert_counts_add_up(tmp_path / "c")
    assert m["records_seen"] == 7


def test_counts_add_up_with_duplicates_citations_and_bad_lines(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(jsonl_docs(3))
    (tmp_path / "b.jsonl").write_bytes(jsonl_docs(2))  # both ids repeat a.jsonl's
    (tmp_path / "cites.tsv").write_text("citing_id\tcited_id\tcategory\nT-0000\tT-0001\tX\nT-0001\tT-0002\tY\n")
    sources = [
        tmp_path / "a.jsonl",
        tmp_path / "b.jsonl",
        tmp_path / "cites.tsv",
        FIXTURES / "docs_with_bad_lines.jsonl",
    ]
    report = ingest(sources, tmp_path / "c", IngestConfig(), progress=False)
    m = assert_counts_add_up(tmp_path / "c")
    assert report.skipped >= 2 + 1 and m["records_written"] == report.documents + 2  # two citation rows


# --- damaged .gz ----------------------------------------------------------------------------


def test_a_truncated_gz_keeps_every_complete_record_before_the_cut(tmp_path):
    raw = jsonl_docs(111)
    packed = gzip.compress(raw)
    (tmp_path / "docs.jsonl.gz").write_bytes(packed[: len(packed) * 2 // 3])
    prefix = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(packed[: len(packed) * 2 // 3])
    complete = prefix.count(b"\n")  # records whose line ended before the cut
    assert 0 < complete < 111
    report = ingest([tmp_path / "docs.jsonl.gz"], tmp_path / "c", IngestConfig(), progress=False)
    ids = [d.id for d in iter_documents(tmp_path / "c")]
    assert ids == [f"T-{i:04d}" for i in range(complete)]  # every complete record, in order
    assert report.skipped >= 1 and any(e["position"] == "rest of file" for e in read_errors(tmp_path / "c"))
    assert_counts_add_up(tmp_path / "c")


@pytest.mark.parametrize("where", [100, 0.5, -6])
def test_a_byte_flipped_gz_lists_the_damaged_records_and_writes_nothing_wrong(tmp_path, where):
    raw = jsonl_docs(111)
    packed = bytearray(gzip.compress(raw))
    at = (
        where
        if isinstance(where, int) and where >= 0
        else int(len(packed) * where)
        if where > 0
        else len(packed) + where
    )
    packed[at] ^= 0xFF  # early: invalid deflate data; middle: CRC mismatch; in the trailer: CRC mismatch
    (tmp_path / "docs.jsonl.gz").write_bytes(bytes(packed))
    (tmp_path / "good.jsonl").write_bytes(jsonl_docs(3).replace(b"T-", b"G-"))
    report = ingest(
        [tmp_path / "docs.jsonl.gz", tmp_path / "good.jsonl"], tmp_path / "c", IngestConfig(), progress=False
    )
    assert [d.id for d in iter_documents(tmp_path / "c")] == ["G-0000", "G-0001", "G-0002"]  # the rest is read
    errors = read_errors(tmp_path / "c")
    assert report.skipped == len(errors) >= 1
    assert all("damaged gzip" in e["reason"] or e["position"] == "rest of file" for e in errors)
    assert_counts_add_up(tmp_path / "c")


# --- Ctrl-C, SIGTERM, kill -9 of `graphtx ingest --workers 2` --------------------------------


@pytest.fixture(scope="module")
def big_jsonl(tmp_path_factory):
    """Enough records that two workers are still busy seconds after they start (about 15 s of work on a quiet 2-core machine, where 20,000 took 1 s)."""
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    path.write_bytes(jsonl_docs(300_000))
    return path


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig, group", [(signal.SIGINT, True), (signal.SIGTERM, False)], ids=["ctrl-c", "sigterm"])
def test_interrupting_ingest_with_workers_ends_within_seconds_leaving_the_previous_corpus(
    finished, big_jsonl, sig, group
):
    before = snapshot(finished)
    run = signal_during(
        ["ingest", str(big_jsonl), "--out", str(finished), "--workers", "2", "--quiet"],
        sig,
        ready=finished / ".partial",
        group=group,
    )
    assert run.was_working
    assert run.returncode == 1 and run.seconds < 10, run
    assert "interrupted" in run.stderr and "Traceback" not in run.stderr
    assert run.left == [], f"processes left behind: {run.left}"
    assert snapshot(finished) == before


@pytest.mark.timeout(120)
def test_kill_9_of_ingest_leaves_no_worker_behind(tmp_path, big_jsonl):
    run = signal_during(
        ["ingest", str(big_jsonl), "--out", str(tmp_path / "c"), "--workers", "2", "--quiet"],
        KILL,
        ready=tmp_path / "c" / ".partial",
        group=False,
    )
    assert run.was_working and run.returncode == -KILL
    assert run.left == [], f"orphaned workers: {run.left}"
    assert not (tmp_path / "c" / "manifest.json").exists()  # a killed first run leaves no corpus that looks complete
    with pytest.raises(FileNotFoundError, match="was interrupted before it completed"):
        store.documents_path(tmp_path / "c")
    assert main(["ingest", str(US_XML), "--out", str(tmp_path / "c"), "--quiet"]) in (
        0,
        3,
    )  # the next run clears the partial
    assert not (tmp_path / "c" / ".partial").exists() and (tmp_path / "c" / "manifest.json").exists()
