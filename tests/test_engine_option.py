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
        w.add_document(
            PatentDocument("US-1-B1", "test", "-", claims=(Claim(1, "A chute comprising a housing.", True),)),
            (),
            "-",
            "1",
        )
    assert main(["parse", str(corpus), "--out", str(tmp_path / "g"), "--engine", "ray"]) == 1
    assert "pip install 'graphtx[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_unknown_engine_is_a_usage_error(tmp_path, capsys):
    assert main(["parse", str(tmp_path), "--out", str(tmp_path / "g"), "--engine", "spark"]) == 2
    assert "invalid choice: 'spark'" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_unreachable_ray_address_is_a_clear_message_at_once(tmp_path, capsys):
    pytest.importorskip("ray", reason="Ray is the optional extra: pip install 'graphtx[ray]'")
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with CorpusWriter(tmp_path / "corpus") as w:
        w.add_document(
            PatentDocument("US-1-B1", "test", "-", claims=(Claim(1, "A chute comprising a housing.", True),)),
            (),
            "-",
            "1",
        )
    args = [
        "parse",
        str(tmp_path / "corpus"),
        "--out",
        str(tmp_path / "g"),
        "--engine",
        "ray",
        "--ray-address",
        f"127.0.0.1:{port}",
    ]
    assert main(args) == 1
    assert f"no Ray cluster answers at '127.0.0.1:{port}'" in capsys.readouterr().err
    assert not (tmp_path / "g" / "graphs.parquet").exists()
