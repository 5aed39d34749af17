"""The parse cache's one default (graphtx/cache_home.py): the config's folder, else $GRAPHTX_PARSE_CACHE, else
~/.cache/graphtx; "" in the variable turns it off; a folder that cannot be made means no cache, said."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphtx.cache_home import ENV_PARSE_CACHE, parse_cache_dir, writable_parse_cache

pytestmark = pytest.mark.timeout(30)


def test_the_config_wins_then_the_variable_then_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_PARSE_CACHE, str(tmp_path / "env"))
    assert parse_cache_dir(str(tmp_path / "configured")) == str(tmp_path / "configured")
    assert parse_cache_dir("") == str(tmp_path / "env")
    monkeypatch.delenv(ENV_PARSE_CACHE)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert parse_cache_dir("") == str(tmp_path / "home" / ".cache" / "graphtx")
    monkeypatch.setenv(ENV_PARSE_CACHE, "")  # set empty: no cache
    assert parse_cache_dir("") == ""
    assert parse_cache_dir("kept") == "kept"  # a config's folder is still used


def test_a_cache_that_cannot_be_made_is_no_cache_and_says_why(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    said: list[str] = []
    assert writable_parse_cache(str(blocker / "cache"), said.append) == ""
    assert len(said) == 1 and "cannot be written" in said[0] and "starts over" in said[0]
    monkeypatch.setenv(ENV_PARSE_CACHE, str(tmp_path / "made"))
    assert writable_parse_cache("", said.append) == str(tmp_path / "made") and Path(tmp_path / "made").is_dir()
    assert len(said) == 1
