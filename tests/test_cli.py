"""The thin command line (graphtx/cli/): one config load per command, graph kinds and rankers from their owners."""

from __future__ import annotations

import argparse

import pytest

from graphtx.cli import build_parser, main
from graphtx.graphs.graph import GRAPH_KINDS
from graphtx.rank.registry import ranker_names


def _subparser(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return parser


def _choices(parser: argparse.ArgumentParser, flag: str) -> list:
    return next(a for a in parser._actions if flag in a.option_strings).choices


def test_graph_kind_and_ranker_choices_come_from_their_owners():
    parser = build_parser()
    for command, flag in (("show", "--kind"), ("encode", "--kind"), ("index", "--kind")):
        assert list(_choices(_subparser(parser, command), flag)) == list(GRAPH_KINDS), command
    for flag in ("--query-kind", "--candidate-kind"):
        assert list(_choices(_subparser(parser, "eval", "citations"), flag)) == list(GRAPH_KINDS)
    assert list(_choices(_subparser(parser, "search"), "--ranker")) == list(ranker_names())
    assert list(_choices(_subparser(parser, "serve"), "--ranker")) == ["auto", *ranker_names()]


@pytest.mark.parametrize("argv", [["index", "--out", "nowhere"], ["plot", "nowhere"], ["search", "--text", "a lamp"]])
def test_a_command_reads_its_config_once(argv, monkeypatch, tmp_path, capsys):
    import graphtx.config

    calls = []
    real = graphtx.config.load_config
    monkeypatch.setattr(graphtx.config, "load_config", lambda path: calls.append(path) or real(path))
    config = tmp_path / "c.yaml"
    config.write_text("seed: 3\n")
    assert main([*argv, "--config", str(config)]) == 2  # each fails on its input, after the config was read
    assert calls == [str(config)]
    assert "error:" in capsys.readouterr().err


def test_a_bad_config_is_a_usage_error_naming_the_key(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("index: {kindd: description}\n")
    assert main(["index", "--out", str(tmp_path / "i"), "--config", str(config)]) == 2
    assert "unknown key(s) in config.index: kindd (did you mean kind?)" in capsys.readouterr().err
