"""Batch queries (graphtx/index/batch.py): topics files, TREC run + table, resume after a kill, skipped topics listed."""

from __future__ import annotations

import csv
import json

import pytest

from graphtx.cli import main
from graphtx.index import Index, read_topics, run_topics
from graphtx.index import batch as batch_module


@pytest.fixture(scope="module")
def index(tiny_index):
    return Index.open(tiny_index)


def _run_lines(path):
    return [line.split() for line in path.read_text().splitlines()]


def test_read_topics_in_each_format_lists_what_it_skips(tmp_path):
    (tmp_path / "t.jsonl").write_text(
        '{"id": "Q1", "text": "A pump."}\n{"id": "T-00001"}\n{"id": "Q3", "doc_id": "T-00002"}\n{bad\n'
        '{"id": "Q1", "text": "again"}\n{"id": "Q 5", "text": "x"}\n{"id": "Q6", "text": " "}\n'
    )
    topics, skipped = read_topics(tmp_path / "t.jsonl")
    assert [(t.qid, t.text, t.doc_id) for t in topics] == [
        ("Q1", "A pump.", None),
        ("T-00001", None, "T-00001"),
        ("Q3", None, "T-00002"),
    ]
    assert [(s.line, s.qid) for s in skipped] == [(4, ""), (5, "Q1"), (6, "Q 5"), (7, "Q6")]
    assert "repeated topic id (first on line 1)" in skipped[1].reason and "white space" in skipped[2].reason

    (tmp_path / "t.tsv").write_text("# comment\nQ1\t1. A pump comprising a valve.\tand more\n\nQ2 no tab here\nQ3\t \n")
    topics, skipped = read_topics(tmp_path / "t.tsv")
    assert [(t.qid, t.line, t.text) for t in topics] == [("Q1", 2, "1. A pump comprising a valve.\tand more")]
    assert [(s.line, s.reason) for s in skipped] == [
        (4, "no tab: expected id<TAB>claim text"),
        (5, "no claim text after the tab"),
    ]

    (tmp_path / "ids.txt").write_text("T-00001\nT-00002\n")
    topics, skipped = read_topics(tmp_path / "ids.txt")
    assert [(t.qid, t.doc_id) for t in topics] == [("T-00001", "T-00001"), ("T-00002", "T-00002")] and not skipped
    with pytest.raises(FileNotFoundError, match="topics file .* does not exist"):
        read_topics(tmp_path / "none.tsv")


def test_run_file_and_table_hold_what_single_searches_return(index, tmp_path):
    (tmp_path / "ids.txt").write_text("T-00003\nNOPE\nT-00007\n")
    report = run_topics(index, tmp_path / "ids.txt", tmp_path / "run.trec", 4, tag="mine", hybrid=True, progress=False)
    assert (report.topics, report.searched, report.resumed) == (3, 2, 0)
    assert [(s.qid, s.line) for s in report.skipped] == [("NOPE", 2)] and "not in the index" in report.skipped[0].reason
    rows = _run_lines(tmp_path / "run.trec")
    for qid in ("T-00003", "T-00007"):
        single = index.search(doc_id=qid, k=4, hybrid=True)  # the same keyword arguments
        mine = [r for r in rows if r[0] == qid]
        assert [(r[1], r[2], int(r[3]), r[5]) for r in mine] == [("Q0", h.doc_id, h.rank, "mine") for h in single.hits]
        assert [float(r[4]) for r in mine] == [h.score for h in single.hits]  # scores round-trip exactly
    table = list(csv.DictReader((tmp_path / "run.csv").open()))
    assert len(table) == 8 and table[0]["topic"] == "T-00003" and table[0]["bm25_score"] != ""
    assert all(" -> " in r["matched_features"] for r in table)  # the features each hit matched
    assert json.loads((tmp_path / "run.skipped.jsonl").read_text())["qid"] == "NOPE"
    assert not (tmp_path / "run.trec.journal").exists()


def test_a_killed_batch_continues_without_duplicates_or_loss(index, tmp_path, monkeypatch):
    ids = [f"T-{i:05d}" for i in range(10, 20)]
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    run_topics(index, tmp_path / "ids.txt", tmp_path / "clean.trec", 3, progress=False)

    real, calls = batch_module.search_claim_set, []

    def dies_at_the_fifth(*args, **kwargs):
        calls.append(kwargs.get("doc_id"))
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(batch_module, "search_claim_set", dies_at_the_fifth)
    with pytest.raises(KeyboardInterrupt):
        run_topics(index, tmp_path / "ids.txt", tmp_path / "killed.trec", 3, progress=False)
    journal = tmp_path / "killed.trec.journal"
    assert len(journal.read_text().splitlines()) == 1 + 4 and not (tmp_path / "killed.trec").exists()
    with journal.open("a") as f:
        f.write('{"topic": "T-00014", "line": 5, "hi')  # a line torn by kill -9: dropped, the topic searched again
    monkeypatch.setattr(batch_module, "search_claim_set", real)
    report = run_topics(index, tmp_path / "ids.txt", tmp_path / "killed.trec", 3, progress=False)
    assert (report.resumed, report.searched) == (4, 10)
    assert (tmp_path / "killed.trec").read_text() == (tmp_path / "clean.trec").read_text()
    assert [r[0] for r in _run_lines(tmp_path / "killed.trec")] == [
        q for q in ids for _ in range(3)
    ]  # each topic once, in order
    assert not journal.exists()


def test_other_settings_do_not_continue_a_journal_unless_restarted(index, tmp_path, monkeypatch):
    (tmp_path / "ids.txt").write_text("T-00001\nT-00002\n")

    def dies(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_module, "search_claim_set", dies)
    with pytest.raises(KeyboardInterrupt):
        run_topics(index, tmp_path / "ids.txt", tmp_path / "r.trec", 3, progress=False)
    monkeypatch.undo()
    with pytest.raises(ValueError, match=r"other settings \(k differ\).*--restart"):
        run_topics(index, tmp_path / "ids.txt", tmp_path / "r.trec", 5, progress=False)
    report = run_topics(index, tmp_path / "ids.txt", tmp_path / "r.trec", 5, restart=True, progress=False)
    assert report.searched == 2 and len(_run_lines(tmp_path / "r.trec")) == 10


CLAIMS = (
    "1. A zorblat5 device comprising a chute, a frame and a handle. 2. The device of claim 1, wherein the chute rotates. "
    "3. A zorblat9 device comprising a battery cell and a cooling plate."
)


def test_a_claim_set_says_which_claims_were_not_searched_or_merges_all(index):
    from graphtx.index import search_claim_set

    first = search_claim_set(index, CLAIMS, 5)
    assert first.searched == (1,) and first.not_searched == (3,) and "claim(s) 3" in first.note
    assert [h.doc_id for h in first.result] == [h.doc_id for h in index.search(CLAIMS, 5)]

    one, three = (
        index.search(CLAIMS.split(" 2. ")[0][3:], 5),
        index.search("A zorblat9 device comprising a battery cell and a cooling plate.", 5),
    )
    merged = search_claim_set(index, CLAIMS, 5, all_independent=True)
    assert merged.searched == (1, 3) and merged.note == "" and merged.merge == "rrf"
    rank = {1: {h.doc_id: h.rank for h in one}, 3: {h.doc_id: h.rank for h in three}}
    expected = {d: sum(1 / (60 + r[d]) for r in rank.values() if d in r) for d in set(rank[1]) | set(rank[3])}
    for hit in merged.result:
        assert hit.score == pytest.approx(expected[hit.doc_id])
        assert merged.found_by[hit.doc_id] == {c: r[hit.doc_id] for c, r in rank.items() if hit.doc_id in r}
    assert [h.score for h in merged.result] == sorted(expected.values(), reverse=True)[:5]

    best = search_claim_set(index, CLAIMS, 5, all_independent=True, merge="max")
    score = {h.doc_id: h.score for h in one}
    for h in three:
        score[h.doc_id] = max(score.get(h.doc_id, h.score), h.score)
    assert [(h.doc_id, h.score) for h in best.result] == sorted(score.items(), key=lambda x: (-x[1], x[0]))[:5]


def test_offset_pages_a_claim_set_single_or_merged(index):
    from graphtx.index import search_claim_set

    for merged in (False, True):
        whole = search_claim_set(index, CLAIMS, 8, all_independent=merged).result
        page = search_claim_set(index, CLAIMS, 3, all_independent=merged, offset=4).result
        assert [(h.rank, h.doc_id) for h in page] == [(h.rank, h.doc_id) for h in whole.hits[4:7]]
        assert [h.score for h in page] == pytest.approx([h.score for h in whole.hits[4:7]])
    with pytest.raises(ValueError, match="offset must be at least 0"):
        search_claim_set(index, CLAIMS, 3, offset=-1)


def test_cli_offset_pages_the_hits(tiny_index, capsys):
    assert main(["search", str(tiny_index), "--id", "T-00003", "-k", "6", "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)["hits"]
    assert main(["search", str(tiny_index), "--id", "T-00003", "-k", "3", "--offset", "3", "--json"]) == 0
    page = json.loads(capsys.readouterr().out)["hits"]
    assert [(h["rank"], h["doc_id"]) for h in page] == [(h["rank"], h["doc_id"]) for h in whole[3:6]] and page[0][
        "rank"
    ] == 4
    assert (
        main(["search", str(tiny_index), "--text", CLAIMS, "-k", "2", "--offset", "2", "--all-independent", "--json"])
        == 0
    )
    assert [h["rank"] for h in json.loads(capsys.readouterr().out)["hits"]] == [3, 4]
    assert main(["search", str(tiny_index), "--id", "T-00003", "--offset", "-1"]) == 2
    assert "the offset must be at least 0" in capsys.readouterr().err


def test_cli_batch_and_claim_set_notes(tiny_index, tmp_path, capsys):
    (tmp_path / "topics.tsv").write_text(f"Q1\t{CLAIMS}\nQ2\tA zorblat3 device comprising a pump.\nQ3\n")
    code = main(
        [
            "search",
            str(tiny_index),
            "--topics",
            str(tmp_path / "topics.tsv"),
            "--output",
            str(tmp_path / "run.trec"),
            "-k",
            "3",
            "--format",
            "jsonl",
        ]
    )
    out = capsys.readouterr().out
    assert (
        code == 3
        and "2 of 3 topics searched" in out
        and "line 3 Q3: no tab" in out
        and "Q1: the query has 2 independent claims" in out
    )
    assert len(_run_lines(tmp_path / "run.trec")) == 6 and len((tmp_path / "run.jsonl").read_text().splitlines()) == 6

    assert main(["search", str(tiny_index), "--text", CLAIMS, "-k", "3", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (
        summary["claims"] == {"searched": [1], "not_searched": [3], "merge": "single"}
        and "claim(s) 3" in summary["note"]
    )
    assert main(["search", str(tiny_index), "--text", CLAIMS, "-k", "3"]) == 0
    assert "note: the query has 2 independent claims" in capsys.readouterr().err
    assert main(["search", "--index", str(tiny_index), "--text", CLAIMS, "-k", "3", "--all-independent", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert len(hits) == 3 and all(h["found_by"] for h in hits)
    assert main(["search", "--index", str(tiny_index), "--text", CLAIMS, "-k", "3", "--all-independent"]) == 0
    said = capsys.readouterr().out
    assert (
        "claims 1, 3 merged by rrf" in said and said.count("found by claim") == 3
    )  # each hit names the claims that found it

    assert main(["search", str(tiny_index), "--topics", str(tmp_path / "topics.tsv")]) == 2
    assert "--topics needs --output" in capsys.readouterr().err
    assert main(["search", str(tiny_index), "--id", "T-00001", "--output", "x.trec"]) == 2
    assert "--output go with --topics" in capsys.readouterr().err


@pytest.mark.timeout(150)
def test_a_second_run_into_the_same_output_stops_at_once(index, tmp_path):
    import subprocess
    import sys

    from graphtx.errors import LockedError
    from graphtx.lock import DirectoryLock

    (tmp_path / "ids.txt").write_text("T-00001\n")
    with DirectoryLock(
        tmp_path, "graphtx search --topics", lock_file=tmp_path / ".r.trec.lock"
    ):  # held here; a child process must see it
        code = (
            "import sys; from graphtx.index import Index, run_topics; "
            f"run_topics(Index.open({str(index.store.dir)!r}), {str(tmp_path / 'ids.txt')!r}, {str(tmp_path / 'r.trec')!r}, 2, progress=False)"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "is locked by PID" in proc.stderr and LockedError.__name__ in proc.stderr
    assert not (tmp_path / "r.trec").exists()


def test_batch_topics_take_the_filters_of_one_search(tiny_index, tmp_path, capsys):
    (tmp_path / "ids.txt").write_text("T-00001\nT-00002\n")
    assert (
        main(
            [
                "search",
                str(tiny_index),
                "--topics",
                str(tmp_path / "ids.txt"),
                "--output",
                str(tmp_path / "f.trec"),
                "-k",
                "5",
                "--ipc",
                "H01M 3",
                "--before",
                "none",
                "--no-features",
                "--quiet",
            ]
        )
        == 0
    )
    docs = [r[2] for r in _run_lines(tmp_path / "f.trec")]
    assert len(docs) == 10 and all(int(d[2:]) % 7 == 3 for d in docs)  # the fixture's IPC is H01M (i % 7)/00


def test_topics_without_hits_are_listed_with_why_and_ids_are_written_as_the_index_spells_them(
    tiny_index, tmp_path, capsys
):
    (tmp_path / "ids.txt").write_text("T00003\nT-00003\nT-00007\n")  # T00003 and T-00003: one document, two spellings
    out = tmp_path / "r.trec"
    assert (
        main(
            [
                "search",
                str(tiny_index),
                "--topics",
                str(tmp_path / "ids.txt"),
                "--output",
                str(out),
                "-k",
                "3",
                "--no-features",
                "--before",
                "none",
                "--quiet",
                "--json",
            ]
        )
        == 3
    )  # 3: some topics skipped
    summary = json.loads(capsys.readouterr().out)
    assert {r[0] for r in _run_lines(out)} == {"T-00003", "T-00007"}  # the typed T00003 written as T-00003
    skipped = [json.loads(line) for line in (tmp_path / "r.skipped.jsonl").read_text().splitlines()]
    assert [(s["qid"], s["line"]) for s in skipped] == [
        ("T-00003", 2)
    ] and "same document as the topic on line 1" in skipped[0]["reason"]
    assert summary["searched"] == 2
    assert not list(tmp_path.glob(".*lock")), "a finished batch run leaves no lock file behind"

    # a cut-off that leaves no document: every topic listed, with the reason, none counted as searched
    assert (
        main(
            [
                "search",
                str(tiny_index),
                "--topics",
                str(tmp_path / "ids.txt"),
                "--output",
                str(tmp_path / "e.trec"),
                "-k",
                "3",
                "--no-features",
                "--before",
                "1900",
            ]
        )
        == 3
    )
    out_text = capsys.readouterr().out
    assert "0 of 3 topics searched" in out_text and "3 topic(s) skipped" in out_text
    reasons = [json.loads(line)["reason"] for line in (tmp_path / "e.skipped.jsonl").read_text().splitlines()]
    assert len(reasons) == 3 and all(
        r.startswith("no hits: no document passes the filters (published before 1900") for r in reasons
    )
    assert (tmp_path / "e.trec").read_text() == ""


def test_a_search_without_hits_says_why_instead_of_an_empty_table(tiny_index, capsys):
    assert main(["search", str(tiny_index), "--id", "T-00003", "--before", "1900", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "no hits: no document passes the filters (published before 1900" in out and "doc id" not in out
    assert (
        main(["search", str(tiny_index), "--id", "T-00003", "--before", "none", "-k", "3", "--offset", "100000"]) == 0
    )
    out = capsys.readouterr().out
    assert "no hits: the ranking ends before rank 100001" in out and "doc id" not in out


def test_a_released_batch_lock_file_is_removed_and_a_waiter_would_not_hold_the_removed_one(tmp_path):
    import os

    from graphtx.lock import DirectoryLock, _same_file

    lock_file = tmp_path / ".r.trec.lock"
    with DirectoryLock(tmp_path, "first", lock_file=lock_file):
        assert lock_file.exists()
    assert not lock_file.exists()
    with DirectoryLock(tmp_path, "again", lock_file=lock_file) as held:  # taken again at once, on a fresh file
        assert lock_file.exists() and held.took_over is None
    with DirectoryLock(tmp_path, "a directory lock"):  # a directory's own .lock stays (it lives inside what it guards)
        pass
    assert (tmp_path / ".lock").exists()

    # a waiter that opened the file before the holder removed it must not count the removed file as the lock
    lock_file.write_text("")
    fd = os.open(lock_file, os.O_RDWR)
    try:
        assert _same_file(fd, lock_file)
        lock_file.unlink()
        assert not _same_file(fd, lock_file)
        lock_file.write_text("")  # another run's new lock file at the path
        assert not _same_file(fd, lock_file)
    finally:
        os.close(fd)


def test_one_search_writes_its_hits_and_claim_charts_as_csv(tiny_index, tmp_path, capsys):
    out = tmp_path / "hits.csv"
    assert (
        main(
            [
                "search",
                str(tiny_index),
                "--id",
                "T-00003",
                "--before",
                "none",
                "-k",
                "4",
                "--explain",
                "--csv",
                str(out),
            ]
        )
        == 0
    )
    assert f"wrote {out}" in capsys.readouterr().out
    hits = list(csv.DictReader(out.open()))
    assert [int(h["rank"]) for h in hits] == [1, 2, 3, 4] and all(
        h["topic"] == "query" and " -> " in h["matched_features"] for h in hits
    )
    chart = list(csv.DictReader((tmp_path / "hits.chart.csv").open()))
    assert {r["doc_id"] for r in chart} == {h["doc_id"] for h in hits}
    assert all(r["found"] in ("words", "model", "not found") for r in chart) and all(
        r["confidence"] for r in chart if r["found"] == "model"
    )
    assert (
        main(["search", str(tiny_index), "--topics", str(out), "--output", str(tmp_path / "r.trec"), "--csv", str(out)])
        == 2
    )
