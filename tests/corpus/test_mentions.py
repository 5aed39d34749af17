"""In-text citations (graphtx/corpus/mentions.py): mentions read in every spelling, family members dropped, split by date."""

from __future__ import annotations

import json

import pytest

from graphtx.corpus.mentions import is_related_application, mask_mentions, patent_numbers


def test_mentions_are_read_with_commas_spaces_lists_and_reissues():
    text = (
        "In U.S. Pat. No. 4 000 566 issued Jan. 4 1977 a boot is vented. See U.S. Pat. Nos. 5,123,456 and 6,234,567; "
        "also US Patent No. RE 12,345 and U.S. Pat. No. 7654321."
    )
    assert [n for n, _, _ in patent_numbers(text)] == ["US4000566", "US5123456", "US6234567", "USRE12345", "US7654321"]
    assert patent_numbers("Ser. No. 09 389 803 and 4 000 566 without the words U.S. Pat.") == []
    assert [
        n for n, _, _ in patent_numbers("U.S. Pat. Nos. 5,123,456, 6,234,567, and 7,345,678; US Patent Re. 34,567")
    ] == [
        "US5123456",
        "US6234567",
        "US7345678",
        "USRE34567",
    ]
    assert [n for n, _, _ in patent_numbers("U.S. Patent Re. 34,567 and U.S. Patent 5,123,456 show")] == [
        "USRE34567",
        "US5123456",
    ]
    assert patent_numbers("U.S. Pat. No. 5,123,456,123") == []  # part of a longer number


@pytest.mark.parametrize(
    "sentence",
    [
        "This application is a continuation of application Ser. No. 09 389 803 filed Sep. 3 1999, now U.S. Pat. No. 6 933 938.",
        "This is a divisional of application Ser. No. 10/123,456, now U.S. Pat. No. 6,933,938.",
        "This application is a divisional of U.S. Pat. No. 6,933,938.",
        "This application claims priority to U.S. Pat. No. 6,933,938, incorporated by reference.",
    ],
)
def test_a_family_mention_is_not_prior_art(sentence):
    (number, start, end), *_ = patent_numbers(sentence)
    assert is_related_application(sentence, start, end)


def test_masking_takes_out_each_sentence_that_mentions_a_patent_and_nothing_else():
    text = (
        "FIELD\n\nA pump is known. In U.S. Pat. No. 4 000 566 issued Jan. 4 1977 to Smith a boot is vented. Another sentence stays. "
        "See also U.S. Pat. Nos. 5,123,456 and 6,234,567.\nNext paragraph."
    )
    assert mask_mentions(text) == "FIELD\n\nA pump is known. Another sentence stays.\nNext paragraph."
    assert mask_mentions("No mention here. None at all.") == "No mention here. None at all."


def test_priority_in_technical_prose_is_not_a_family_word():
    text = "The scheduler gives priority to urgent packets, as in U.S. Pat. No. 6,933,938."
    (number, start, end), *_ = patent_numbers(text)
    assert not is_related_application(text, start, end)


def test_prior_art_mentions_in_another_paragraph_stay():
    text = "CROSS-REFERENCE: a continuation of Ser. No. 1.\n\nBACKGROUND\n\nU.S. Pat. No. 6,933,938 describes a pump with a valve."
    (number, start, end), *_ = patent_numbers(text)
    assert not is_related_application(text, start, end)


def _corpus(tmp_path, docs):
    from graphtx.cli import main

    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    main(["ingest", str(tmp_path / "docs.jsonl"), "--out", str(tmp_path / "corpus"), "--quiet"])
    return tmp_path / "corpus"


def test_mined_citations_stay_within_the_corpus_and_split_by_the_citing_date(tmp_path, capsys):
    from graphtx.cli import main

    docs = [
        {"id": "US-1000001", "date": "2001-01-01", "title": "pump", "abstract": "a pump", "description": "A pump."},
        {
            "id": "US-1000002",
            "date": "2002-01-01",
            "title": "valve",
            "abstract": "a valve",
            "description": "U.S. Pat. No. 1,000,001 shows a pump. U.S. Pat. No. 9,999,999 is elsewhere.",
        },
        {
            "id": "US-1000003",
            "date": "2003-01-01",
            "title": "seat",
            "abstract": "a seat",
            "description": "Known: U.S. Pat. Nos. 1,000,001 and 1 000 002.\nThis application is a continuation of U.S. Pat. No. 1,000,004.",
        },
        {
            "id": "US-1000004",
            "date": "2004-01-01",
            "title": "stem",
            "abstract": "a stem",
            "description": "U.S. Pat. No. 1,000,003 and the later U.S. Pat. No. 1,000,005 and itself, U.S. Pat. No. 1,000,004.",
        },
        {"id": "US-1000005", "date": "2005-01-01", "title": "ring", "abstract": "a ring", "description": "A ring."},
    ]
    corpus = _corpus(tmp_path, docs)
    capsys.readouterr()  # ingest's report
    assert (
        main(["mine-citations", str(corpus), "--out", str(tmp_path / "mined"), "--valid-share", "0.34", "--json"]) == 0
    )
    summary = json.loads(capsys.readouterr().out)

    def pairs(name):
        lines = (tmp_path / "mined" / name).read_text().splitlines()
        assert lines[0] == "citing_id\tcited_id"
        return [tuple(line.split("\t")) for line in lines[1:]]

    train, validation = pairs("citations_train.tsv"), pairs("citations_validation.tsv")
    assert train == [("US-1000002", "US-1000001"), ("US-1000003", "US-1000001"), ("US-1000003", "US-1000002")]
    assert validation == [("US-1000004", "US-1000003")] and summary["valid_from"] == "2004-01-01"
    dropped = summary["dropped"]
    assert (
        dropped["not in the corpus"] == 1
        and dropped["the document itself"] == 1
        and dropped["cited document not older"] == 1
    )
    assert sum(v for k, v in dropped.items() if k.startswith("a related application")) == 1
    masked = {
        json.loads(line)["id"]: json.loads(line)
        for line in (tmp_path / "mined" / "masked_citing.jsonl").read_text().splitlines()
    }
    assert set(masked) == {"US-1000002", "US-1000003", "US-1000004"}  # the citing documents, their mentions taken out
    assert "1,000,001" not in masked["US-1000002"].get("description", "") and masked["US-1000002"]["title"] == "valve"
    log = [json.loads(line) for line in (tmp_path / "mined" / "mentions.jsonl").read_text().splitlines()]
    assert len(log) == summary["mentions"] == 8 and sum(1 for e in log if e.get("dropped")) == 4


def test_a_share_outside_zero_to_one_is_refused(tmp_path, capsys):
    from graphtx.cli import main

    assert main(["mine-citations", str(tmp_path), "--out", str(tmp_path / "m"), "--valid-share", "1.5"]) == 2
    assert "the share must be in [0, 1)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "paragraph",
    [
        # the family words far from the mention, in the same paragraph (beyond the 200 characters read before)
        "This application is a division of application Ser. No. 10 325 997 filed Dec. 19 2002. "
        + "The government has rights. " * 12
        + "It names U.S. Pat. No. 6,888,297 too.",
        "The background section of parent U.S. Pat. No. 6,888,297 includes further details.",
        "This patent application is related to U.S. Pat. Nos. 7 840 482 and 6 888 297 as well as published applications.",
        "This application is also related to U.S. patent application Ser. No. 12 033 539 U.S. Pat. No. 6 888 297 filed on Feb. 19 2008.",
    ],
)
def test_a_family_word_anywhere_in_the_paragraph_beside_an_application_marks_the_mention(paragraph):
    number, start, end = [m for m in patent_numbers(paragraph) if m[0] == "US6888297"][0]
    assert is_related_application(paragraph, start, end)


def test_application_as_a_word_of_software_prose_is_not_an_application_reference():
    text = (
        "A continuation token is returned to the application by the server. " * 6
        + "Paging of this kind is known from U.S. Pat. No. 6,888,297."
    )
    (number, start, end), *_ = patent_numbers(text)
    assert not is_related_application(text, start, end)
    for text in (
        "The present invention is related to data processing. U.S. Pat. No. 6,888,297 shows a cache.",
        "The present invention is related to pattern recognition, as in U.S. Pat. No. 6,888,297.",
        "A continuation is sent once the user notification arrives (the browser notifies). U.S. Pat. No. 6,888,297 shows it.",
        "The parent application spawns a child process, a continuation of the parent pattern. See U.S. Pat. No. 6,888,297.",
        "A cross-reference index maps each application node to a continuation. U.S. Pat. No. 6,888,297 builds one.",
    ):
        (number, start, end), *_ = patent_numbers(text)
        assert not is_related_application(text, start, end), text


def test_shared_text_and_applicants():
    from graphtx.corpus.mentions import applicant_key, same_applicant, shared_text, shingles

    a = shingles("one two three four five six seven eight nine ten eleven")
    assert len(a) == 4 and shared_text(a, a) == 1.0 and shared_text(a, set()) == 0.0
    b = shingles("one two three four five six seven eight nine something else entirely here now")
    assert shared_text(a, b) == pytest.approx(2 / 4)  # two of the smaller set's four 8-grams
    assert applicant_key("International Business Machines Corp.") == applicant_key(
        "INTERNATIONAL BUSINESS MACHINES CORPORATION"
    )
    assert same_applicant(["Sideband Networks Inc."], ["Sideband Networks, Inc.", "X"]) and not same_applicant(
        ["A Corp"], []
    )
    assert (
        applicant_key("AG Leader Technology") == "ag leader technology"
        and applicant_key("The Boeing Company") == "boeing"
    )
    assert not same_applicant(["Secretary of the Army"], ["Secretary of the Navy"])


def test_mining_drops_family_pairs_by_any_mention_and_by_shared_text_and_reports_applicants(tmp_path, capsys):
    from graphtx.cli import main

    spec = " ".join(f"word{i}" for i in range(300))  # a long shared specification: a continuation repeats its parent
    docs = [
        {
            "id": "US-2000001",
            "date": "2001-01-01",
            "title": "parent",
            "abstract": "a",
            "description": spec,
            "applicants": ["Acme Corp."],
        },
        {
            "id": "US-2000002",
            "date": "2002-01-01",
            "title": "child U.S. Pat. No. 2,000,001",
            "abstract": "b U.S. Pat. No. 2,000,001 made it",
            "description": "Prior art: U.S. Pat. No. 2,000,001 shows a pump. " + spec,
            "applicants": ["ACME Corporation"],
        },
        {
            "id": "US-2000003",
            "date": "2003-01-01",
            "title": "seat",
            "abstract": "c",
            "applicants": ["Acme, Inc."],
            "description": "U.S. Pat. No. 2,000,002 shows a valve.\nThe background of parent U.S. Pat. No. 2,000,001 has more. "
            "\nU.S. Pat. No. 2,000,004 is prior art here. A second sentence.",
        },
        {
            "id": "US-2000004",
            "date": "2000-01-01",
            "title": "ring",
            "abstract": "d",
            "description": "A ring.",
            "applicants": ["Zeta LLC"],
        },
        {
            "id": "US-2000005",
            "date": "2004-01-01",
            "title": "cap",
            "abstract": "e",
            "applicants": ["Acme Corp"],
            "description": "See U.S. Pat. No. 2,000,004 for rings.\nThis application claims priority to application Ser. No. 1 filed Jan. 1 "
            "2003. Unrelated words. U.S. Pat. No. 2,000,004 again.",
        },
    ]
    corpus = _corpus(tmp_path, docs)
    capsys.readouterr()
    assert (
        main(["mine-citations", str(corpus), "--out", str(tmp_path / "mined"), "--valid-share", "0.01", "--json"]) == 0
    )
    summary = json.loads(capsys.readouterr().out)
    kept = [json.loads(line) for line in (tmp_path / "mined" / "kept_pairs.jsonl").read_text().splitlines()]
    # 2 -> 1 shares its whole specification; 5 -> 4 is named in a priority paragraph once: both are family pairs
    assert [(k["citing_id"], k["cited_id"]) for k in kept] == [
        ("US-2000003", "US-2000002"),
        ("US-2000003", "US-2000004"),
    ]
    assert summary["dropped"]["the two documents share most of their text (a family member)"] == 1
    assert (
        summary["dropped"]["named as a related application by another mention in the same document"] == 1
    )  # 5 -> 4's first
    assert (
        summary["same_applicant"] == 1 and summary["with_applicants"] == 2
    )  # 3 -> 2: Acme, Inc. and ACME Corporation; 3 -> 4: no
    assert (
        kept[0]["same_applicant"]
        and not kept[1]["same_applicant"]
        and kept[0]["shared_text"] < 0.3
        and "U.S. Pat. No. 2,000,002" in kept[0]["context"]
    )
    all_pairs = (tmp_path / "mined" / "citations_all.tsv").read_text().splitlines()
    assert all_pairs == ["citing_id\tcited_id", "US-2000003\tUS-2000002", "US-2000003\tUS-2000004"]
    # the citing document's mentions are masked in every field a query reads
    masked = [json.loads(line) for line in (tmp_path / "mined" / "masked_citing.jsonl").read_text().splitlines()]
    assert [m["id"] for m in masked] == ["US-2000003"] and "Pat. No" not in json.dumps(masked[0])
    assert (
        main(["mine-citations", str(corpus), "--out", str(tmp_path / "m2"), "--max-shared-text", "0", "--quiet"]) == 2
    )
    assert "the share must be in (0, 1]" in capsys.readouterr().err
