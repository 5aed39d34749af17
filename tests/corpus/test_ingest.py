"""The ingest pipeline: every record accounted for, streaming, workers, archives, the CLI."""

from __future__ import annotations

import gzip
import json
import shutil
import zipfile

import pyarrow.parquet as pq
import pytest

from graphtx.cli import main
from graphtx.config import IngestConfig
from graphtx.corpus.citations import read_citations
from graphtx.corpus.ingest import ingest
from graphtx.corpus.schema import citation_to_row
from graphtx.corpus.store import iter_documents, read_errors

from ..conftest import FIXTURES

US_XML = FIXTURES / "us_grants_small.xml"


def test_every_record_is_written_or_listed(tmp_path):
    report = ingest([FIXTURES], tmp_path / "c", IngestConfig(), progress=False)
    errors = read_errors(tmp_path / "c")
    assert report.documents + report.skipped == report.records_seen
    assert len(errors) == report.skipped > 0
    assert all(e["file"] and e["position"] and e["reason"] for e in errors)
    ids = [d.id for d in iter_documents(tmp_path / "c")]
    assert len(ids) == len(set(ids)) == report.documents
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest["documents"] == report.documents and manifest["skipped"] == report.skipped


def test_duplicate_ids_keep_the_first_and_list_the_rest(tmp_path):
    shutil.copy(US_XML, tmp_path / "a.xml")
    shutil.copy(US_XML, tmp_path / "b.xml")
    report = ingest([tmp_path / "a.xml", tmp_path / "b.xml"], tmp_path / "c", IngestConfig(), progress=False)
    dupes = [e for e in read_errors(tmp_path / "c") if e["reason"].startswith("duplicate id")]
    assert len(dupes) == report.documents  # every document of b.xml repeats one of a.xml
    assert all(e["file"].endswith("b.xml") and "a.xml" in e["reason"] for e in dupes)


def test_gzip_and_zip_inputs_read_like_plain_files(tmp_path):
    plain = ingest([US_XML], tmp_path / "plain", IngestConfig(), progress=False)
    with gzip.open(tmp_path / "grants.xml.gz", "wb") as f:
        f.write(US_XML.read_bytes())
    with zipfile.ZipFile(tmp_path / "grants.zip", "w") as z:
        z.write(US_XML, "ipg110301.xml")
    for name in ("grants.xml.gz", "grants.zip"):
        packed = ingest([tmp_path / name], tmp_path / name.replace(".", "_"), IngestConfig(), progress=False)
        assert (packed.documents, packed.skipped) == (plain.documents, plain.skipped)


def test_two_workers_write_the_same_corpus(tmp_path):
    ingest([FIXTURES], tmp_path / "one", IngestConfig(workers=1), progress=False)
    ingest([FIXTURES], tmp_path / "two", IngestConfig(workers=2, chunk_size=1), progress=False)
    for name in ("documents.parquet", "citations.parquet"):
        assert pq.read_table(tmp_path / "one" / name).equals(pq.read_table(tmp_path / "two" / name))
    strip = lambda errs: [(e["file"], e["position"], e["reason"]) for e in errs]  # noqa: E731
    assert strip(read_errors(tmp_path / "one")) == strip(read_errors(tmp_path / "two"))


def test_oversized_record_is_listed_not_parsed(tmp_path):
    plain = ingest([US_XML], tmp_path / "plain", IngestConfig(), progress=False)
    report = ingest([US_XML], tmp_path / "c", IngestConfig(max_record_mb=0.0001), progress=False)
    assert report.documents == 0 and report.skipped == plain.records_seen
    reasons = [e["reason"] for e in read_errors(tmp_path / "c")]
    assert (
        sum("bytes, over the limit of 0.0001 MiB" in r for r in reasons) == len(reasons) - 1
    )  # all but the sequence listing


def test_unreadable_and_unknown_files_are_listed(tmp_path):
    (tmp_path / "notes.bin").write_bytes(b"\x00\x01")
    (tmp_path / "odd.xml").write_text("<?xml version='1.0'?><html></html>")
    (tmp_path / "gone.xml").symlink_to(tmp_path / "missing.xml")
    report = ingest(
        [tmp_path / "notes.bin", tmp_path / "odd.xml", tmp_path / "gone.xml"],
        tmp_path / "c",
        IngestConfig(),
        progress=False,
    )
    reasons = {e["file"].split("/")[-1]: e["reason"] for e in read_errors(tmp_path / "c")}
    assert report.skipped == 3
    assert "cannot tell the format" in reasons["notes.bin"] and "cannot tell the format" in reasons["odd.xml"]
    assert reasons["gone.xml"].startswith("dangling symbolic link to")


def test_citation_tsv_joins_the_corpus(tmp_path):
    (tmp_path / "cites.tsv").write_text("citing_id\tcited_id\tcategory\nEV-0001\tEV-0002\tX\nEV-0001\tEV-0002\tX\n")
    ingest([tmp_path / "cites.tsv"], tmp_path / "c", IngestConfig(), progress=False)
    rows = [citation_to_row(c) for c in read_citations(tmp_path / "c")]
    assert rows == [{"citing_id": "EV-0001", "cited_id": "EV-0002", "category": "X", "source": "tsv"}]  # de-duplicated


def test_cli_exit_status_says_whether_anything_was_skipped(tmp_path, capsys):
    assert main(["ingest", str(FIXTURES / "ep_grant_small.xml"), "--out", str(tmp_path / "ok"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["ingest", str(FIXTURES), "--out", str(tmp_path / "some"), "--quiet", "--json"]) == 3
    summary = json.loads(capsys.readouterr().out)
    assert summary["skipped"] == len(read_errors(tmp_path / "some")) > 0
    assert summary["documents"] + summary["skipped"] == summary["records_seen"]


@pytest.mark.parametrize("bad", [["--workers", "0"], ["--format", "pdf"]])
def test_cli_bad_options_are_clear_errors(tmp_path, capsys, bad):
    assert main(["ingest", str(US_XML), "--out", str(tmp_path / "c"), "--quiet", *bad]) == 2
    assert "error:" in capsys.readouterr().err


def test_skipped_record_names_its_id_when_known(tmp_path):
    (tmp_path / "docs.jsonl").write_text('{"id": "X-1"}\n{"id": "X-2", "abstract": "A pump with a valve."}\n')
    report = ingest([tmp_path / "docs.jsonl"], tmp_path / "c", IngestConfig(), progress=False)
    assert (report.documents, report.skipped) == (1, 1)
    [error] = read_errors(tmp_path / "c")
    assert (error["id"], error["position"], error["reason"]) == (
        "X-1",
        "line 1",
        "no text: no title, claims, abstract or description",
    )


def test_xml_to_parquet_to_objects_round_trip(tmp_path):
    from graphtx.corpus import uspto
    from graphtx.corpus.base import RecordError, SkippedRecord
    from graphtx.corpus.formats import open_binary

    direct = []
    for name, stream in open_binary(US_XML):
        with stream:
            for raw in uspto.iter_raw(name, stream):
                if isinstance(raw, SkippedRecord):
                    continue  # the sequence listing
                try:
                    direct.append(uspto.parse(raw).document)
                except RecordError:
                    continue  # the malformed fixture record
    ingest([US_XML], tmp_path / "c", IngestConfig(), progress=False)
    assert list(iter_documents(tmp_path / "c")) == direct and direct


def test_a_sequence_listing_is_accounted_for_not_a_failure(tmp_path, capsys):
    """A weekly grant file holds sequence listings (<sequence-cwu>): listed with their reason, and ingest exits 0, so a
    script with `set -e` or `&&` goes on; a record that fails to read as a patent still exits 3."""
    from graphtx.cli import main

    records = [
        b"<?xml" + r for r in US_XML.read_bytes().split(b"<?xml")[1:]
    ]  # the fixture: grant, sequence listing, grant, a broken one
    clean = tmp_path / "weekly.xml"
    clean.write_bytes(b"".join(records[:3]))
    assert main(["ingest", str(clean), "--out", str(tmp_path / "c"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["skipped"] == summary["not_patents"] == 1 and summary["documents"] == 2
    assert [e["reason"].split(":")[0] for e in read_errors(tmp_path / "c")] == ["not a patent document"]
    assert main(["ingest", str(US_XML), "--out", str(tmp_path / "d"), "--quiet"]) == 3  # with the broken grant
