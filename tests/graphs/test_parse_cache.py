"""A parse cache (parse.cache_dir, --cache): shards kept under the parse's fingerprint, resumed and reused, the same graphs."""

from __future__ import annotations

import json
from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from graphtx.config import ParseConfig
from graphtx.graphs import parse as parse_module
from graphtx.graphs.parse import GRAPHS_FILE, cache_folder, parse_corpus, parse_fingerprint

pytestmark = pytest.mark.timeout(240)


def _graphs(folder):
    return pq.read_table(folder / GRAPHS_FILE).to_pylist()


def _dies_on_the_third(monkeypatch):
    """Parsing raises Ctrl-C at its third document; returns (the real parse of one document, the ids parsed)."""
    real, calls = parse_module._build_one, []

    def dies_on_the_third(doc):
        calls.append(doc.id)
        if len(calls) == 3:
            raise KeyboardInterrupt  # as Ctrl-C
        return real(doc)

    monkeypatch.setattr(parse_module, "_build_one", dies_on_the_third)
    return real, calls


def test_a_cached_parse_gives_the_same_graphs_and_the_second_run_parses_nothing(tiny_pretrained, tmp_path, monkeypatch):
    corpus, plain = tiny_pretrained / "corpus", tiny_pretrained / "graphs"
    cfg = ParseConfig(cache_dir=str(tmp_path / "cache"), shard_size=2)  # 3 documents: shards of 2 and 1
    parse_corpus(corpus, tmp_path / "a", cfg, progress=False)
    assert _graphs(tmp_path / "a") == _graphs(plain)  # the same rows as the parse without a cache
    folder = cache_folder(corpus, cfg)
    assert folder.parent == tmp_path / "cache" and len(list(folder.glob("*.pkl"))) == 2

    def no_parsing(doc):
        raise AssertionError(f"{doc.id} parsed again")

    monkeypatch.setattr(parse_module, "_build_one", no_parsing)  # workers 1: the pool runs in this process
    parse_corpus(corpus, tmp_path / "b", cfg, progress=False)
    assert _graphs(tmp_path / "b") == _graphs(plain)


def test_a_killed_cached_parse_resumes_from_its_finished_shards(tiny_pretrained, tmp_path, monkeypatch):
    corpus = tiny_pretrained / "corpus"
    cfg = ParseConfig(cache_dir=str(tmp_path / "cache"), shard_size=1)
    real, calls = _dies_on_the_third(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        parse_corpus(corpus, tmp_path / "out", cfg, progress=False)
    assert not (tmp_path / "out" / GRAPHS_FILE).exists()
    calls.clear()
    monkeypatch.setattr(parse_module, "_build_one", lambda doc: calls.append(doc.id) or real(doc))
    parse_corpus(corpus, tmp_path / "out", cfg, progress=False)
    assert calls == ["D-2"]  # only the shard the kill interrupted
    assert _graphs(tmp_path / "out") == _graphs(tiny_pretrained / "graphs")


def test_the_fingerprint_changes_with_what_changes_the_graphs_and_not_with_workers(tiny_pretrained, tmp_path):
    corpus = tiny_pretrained / "corpus"
    base = parse_fingerprint(corpus, ParseConfig())
    assert parse_fingerprint(corpus, ParseConfig(workers=2, chunk_size=9, cache_dir="x")) == base
    assert parse_fingerprint(corpus, ParseConfig(max_feature_nodes=5)) != base
    rules = tmp_path / "rules"
    rules.mkdir()
    for f in ParseConfig().rules_path.glob("*.yaml"):
        (rules / f.name).write_bytes(f.read_bytes())
    assert (
        parse_fingerprint(corpus, ParseConfig(rules_dir=str(rules)))["rules"] == base["rules"]
    )  # the same contents elsewhere
    first = sorted(rules.glob("*.yaml"))[0]
    first.write_text(first.read_text() + "\n# changed\n")
    assert parse_fingerprint(corpus, ParseConfig(rules_dir=str(rules)))["rules"] != base["rules"]
    assert json.dumps(base)  # a JSON key for the journal


def test_the_cache_follows_the_corpus_bytes_not_its_path_or_time(tiny_pretrained, tmp_path):
    """A corpus ingested anew (ingest writes the same bytes) or moved finds its cache; one changed row does not."""
    import os
    import shutil

    import pyarrow.parquet as pq

    from graphtx.corpus.store import documents_path

    corpus, cfg = tiny_pretrained / "corpus", ParseConfig(cache_dir=str(tmp_path / "cache"))
    again = tmp_path / "elsewhere" / "corpus"
    shutil.copytree(corpus, again)
    docs = documents_path(again)
    os.utime(docs, ns=(docs.stat().st_atime_ns, docs.stat().st_mtime_ns + 10**9))  # written later
    assert cache_folder(again, cfg) == cache_folder(corpus, cfg)
    table = pq.read_table(docs)
    pq.write_table(table.slice(0, table.num_rows - 1), docs)  # one document fewer
    assert cache_folder(again, cfg) != cache_folder(corpus, cfg)


def test_the_cli_takes_a_cache(tiny_pretrained, tmp_path, capsys):
    from graphtx.cli import main

    assert (
        main(
            [
                "parse",
                str(tiny_pretrained / "corpus"),
                "--out",
                str(tmp_path / "g"),
                "--cache",
                str(tmp_path / "c"),
                "--quiet",
            ]
        )
        == 0
    )
    assert [p.name.startswith("parse-") for p in (tmp_path / "c").iterdir()] == [True]


def test_the_cli_parse_uses_the_builds_parse_cache_by_default_and_a_killed_one_resumes(
    tiny_pretrained, tmp_path, monkeypatch, capsys
):
    """No --cache, no parse.cache_dir: `graphtx parse` keeps its shards where `graphtx build` does ($GRAPHTX_PARSE_CACHE
    here, ~/.cache/graphtx for a user), so Ctrl-C loses only the shard it interrupted; --cache '' keeps none."""
    from graphtx.cli import main
    from graphtx.config import load_config

    home = tmp_path / "home-cache"
    monkeypatch.setenv("GRAPHTX_PARSE_CACHE", str(home))
    config = tmp_path / "one-per-shard.yaml"
    config.write_text("parse:\n  shard_size: 1\n")
    real, calls = _dies_on_the_third(monkeypatch)
    run = ["parse", str(tiny_pretrained / "corpus"), "--out", str(tmp_path / "g"), "--config", str(config)]
    assert main(run) == 1
    err = capsys.readouterr().err
    assert f"finished shards kept in {home}" in err and "the shards finished so far are kept" in err
    calls.clear()
    monkeypatch.setattr(parse_module, "_build_one", lambda doc: calls.append(doc.id) or real(doc))
    assert main([*run, "--quiet"]) == 0
    assert calls == ["D-2"]  # only the shard the kill interrupted
    assert _graphs(tmp_path / "g") == _graphs(tiny_pretrained / "graphs")
    kept = cache_folder(tiny_pretrained / "corpus", replace(load_config(config).parse, cache_dir=str(home)))
    assert kept.is_dir()
    # --cache '': one piece, nothing kept
    calls.clear()
    assert main([*run, "--out", str(tmp_path / "h"), "--cache", "", "--quiet"]) == 0
    assert len(calls) == 3 and list(home.iterdir()) == [kept]
