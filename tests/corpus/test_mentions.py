"""In-text citations (graphtx/corpus/mentions.py): mentions read in every spelling, family members dropped, split by date."""

from __future__ import annotations

import json

import pytest

from graphtx.corpus.mentions import is_related_application, mask_mentions, patent_numbers


def test_mentions_are_read_with_commas_spaces_lists_and_reissues():
    text = ("In U.S. Pat. No. 4 000 566 issued Jan. 4 1977 a boot is vented. See U.S. Pat. Nos. 5,123,456 and 6,234,567; "
            "also US Patent No. RE 12,345 and U.S. Pat. No. 7654321.")  # fmt: skip
    assert [n for n, _, _ in patent_numbers(text)] == ["US4000566", "US5123456", "US6234567", "USRE12345", "US7654321"]
    assert patent_numbers("Ser. No. 09 389 803 and 4 000 566 without the words U.S. Pat.") == []
    assert [n for n, _, _ in patent_numbers("U.S. Pat. Nos. 5,123,456, 6,234,567, and 7,345,678; US Patent Re. 34,567")] == [
        "US5123456", "US6234567", "US7345678", "USRE34567"]  # fmt: skip
    assert [n for n, _, _ in patent_numbers("U.S. Patent Re. 34,567 and U.S. Patent 5,123,456 show")] == ["USRE34567", "US5123456"]
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
    text = ("FIELD\n\nA pump is known. In U.S. Pat. No. 4 000 566 issued Jan. 4 1977 to Smith a boot is vented. Another sentence stays. "
            "See also U.S. Pat. Nos. 5,123,456 and 6,234,567.\nNext paragraph.")  # fmt: skip
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
        {"id": "US-1000002", "date": "2002-01-01", "title": "valve", "abstract": "a valve",
         "description": "U.S. Pat. No. 1,000,001 shows a pump. U.S. Pat. No. 9,999,999 is elsewhere."},
        {"id": "US-1000003", "date": "2003-01-01", "title": "seat", "abstract": "a seat",
         "description": "Known: U.S. Pat. Nos. 1,000,001 and 1 000 002.\nThis application is a continuation of U.S. Pat. No. 1,000,004."},
        {"id": "US-1000004", "date": "2004-01-01", "title": "stem", "abstract": "a stem",
         "description": "U.S. Pat. No. 1,000,003 and the later U.S. Pat. No. 1,000,005 and itself, U.S. Pat. No. 1,000,004."},
        {"id": "US-1000005", "date": "2005-01-01", "title": "ring", "abstract": "a ring", "description": "A ring."},
    ]  # fmt: skip
    corpus = _corpus(tmp_path, docs)
    capsys.readouterr()  # ingest's report
    assert main(["mine-citations", str(corpus), "--out", str(tmp_path / "mined"), "--valid-share", "0.34", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)

    def pairs(name):
        lines = (tmp_path / "mined" / name).read_text().splitlines()
        assert lines[0] == "citing_id\tcited_id"
        return [tuple(line.split("\t")) for line in lines[1:]]

    train, validation = pairs("citations_train.tsv"), pairs("citations_validation.tsv")
    assert train == [("US-1000002", "US-1000001"), ("US-1000003", "US-1000001"), ("US-1000003", "US-1000002")]
    assert validation == [("US-1000004", "US-1000003")] and summary["valid_from"] == "2004-01-01"
    dropped = summary["dropped"]
    assert dropped["not in the corpus"] == 1 and dropped["the document itself"] == 1 and dropped["cited document not older"] == 1
    assert sum(v for k, v in dropped.items() if k.startswith("a related application")) == 1
    masked = {json.loads(line)["id"]: json.loads(line) for line in (tmp_path / "mined" / "masked_citing.jsonl").read_text().splitlines()}
    assert set(masked) == {"US-1000002", "US-1000003", "US-1000004"}  # the citing documents, their mentions taken out
    assert "1,000,001" not in masked["US-1000002"].get("description", "") and masked["US-1000002"]["title"] == "valve"
    log = [json.loads(line) for line in (tmp_path / "mined" / "mentions.jsonl").read_text().splitlines()]
    assert len(log) == summary["mentions"] == 8 and sum(1 for e in log if e.get("dropped")) == 4


def test_a_share_outside_zero_to_one_is_refused(tmp_path, capsys):
    from graphtx.cli import main

    assert main(["mine-citations", str(tmp_path), "--out", str(tmp_path / "m"), "--valid-share", "1.5"]) == 2
    assert "the share must be in [0, 1)" in capsys.readouterr().err
