"""Friendlier command-line errors (graphtx/cli/usage.py): closest flags and choices, numeric flags in words."""

from __future__ import annotations

import pytest

from graphtx.cli import main


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["search", "--index", "x", "--txet", "a claim"], "unrecognized argument --txet; did you mean --text?"),
        (["search", "--txet", "a claim"], "did you mean --text?"),  # reported before the missing --index
        (["index", "--out", "x", "--chunksize", "4"], "did you mean --chunk-size?"),
        (["eval", "citations", "corpus", "--tunee"], "did you mean --tune?"),
        (
            ["search", "--index", "x", "--text", "a", "--zzzzzz"],
            "unrecognized argument --zzzzzz (see graphtx search --help)",
        ),
        (["serach", "--index", "x"], "did you mean 'search'?"),
        (["search", "--index", "x", "--text", "a", "--ranker", "hybird"], "did you mean 'hybrid'?"),
    ],
)
def test_unknown_flags_and_choices_suggest_the_closest(argv, expected, capsys):
    assert main(argv) == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["search", "--index", "x", "--text", "a", "-k", "0"], "argument -k: k must be at least 1 (got 0)"),
        (["search", "--index", "x", "--text", "a", "-k", "ten"], "k must be a whole number (got 'ten')"),
        (["search", "--index", "x", "--text", "a", "--rerank-depth", "0"], "the re-rank depth must be at least 1"),
        (["index", "--out", "x", "--batch-size", "-3"], "the batch size must be at least 1 (got -3)"),
        (["ingest", "a", "--out", "b", "--workers", "0"], "the number of workers must be at least 1"),
        (["build", "a", "--out", "b", "--steps", "0"], "the number of steps must be at least 1 (got 0), or 'all'"),
        (
            ["build", "a", "--out", "b", "--steps", "every"],
            "the number of steps must be a whole number (got 'every'), or",
        ),
        (["ingest", "a", "--out", "b", "--max-record-mb", "0"], "the record size limit must be a positive number"),
        (["serve", "--index", "x", "--port", "70000"], "the port must be at most 65535"),
        (["eval", "citations", "c", "--ndcg-k", "0"], "the nDCG cut-off must be at least 1"),
        (["pretrain", "c", "--out", "t", "--vocab-size", "8"], "the vocabulary size must be at least 16"),
    ],
)
def test_numeric_flags_are_checked_in_words_not_config_keys(argv, expected, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err and "search.k" not in err and ">=" not in err


def test_known_abbreviations_and_attached_values_still_parse():
    from graphtx.cli import build_parser

    args = build_parser().parse_args(["search", "--ind", "x", "--text", "-", "-k5", "--hyb"])
    assert args.index == "x" and args.k == 5 and args.hybrid and args.text == "-"


def test_ingest_of_a_missing_path_exits_2_with_the_message(tmp_path, capsys):
    code = main(["ingest", str(tmp_path / "no" / "such.xml"), "--out", str(tmp_path / "corpus"), "--quiet"])
    err = capsys.readouterr().err
    assert (
        code == 2
        and f"no such file or directory: {tmp_path / 'no' / 'such.xml'}" in err
        and "nothing was written" in err
    )
    assert not (tmp_path / "corpus").exists()
