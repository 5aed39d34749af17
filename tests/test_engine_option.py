"""--engine without Ray installed: a clear message and nothing written (runs in the default suite, Ray or not)."""

from __future__ import annotations

import sys

import pytest

from graphtx.cli import main
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter


@pytest.fixture()
def no_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as without the extra


def test_engine_ray_without_ray_names_the_extra(tmp_path, no_ray, capsys):
    corpus = tmp_path / "corpus"
    with CorpusWriter(corpus) as w:
        w.add_document(PatentDocument("US-1-B1", "test", "-", claims=(Claim(1, "A chute comprising a housing.", True),)), (), "-", "1")
    assert main(["parse", str(corpus), "--out", str(tmp_path / "g"), "--engine", "ray"]) == 1
    assert "pip install 'graphtx[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_unknown_engine_is_a_usage_error(tmp_path, capsys):
    assert main(["parse", str(tmp_path), "--out", str(tmp_path / "g"), "--engine", "spark"]) == 2
    assert "invalid choice: 'spark'" in capsys.readouterr().err
