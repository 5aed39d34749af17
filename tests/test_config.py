from __future__ import annotations

import pytest

from graphtx.config import REPO_ROOT, GraphtxConfig, ParseConfig, config_from_dict, load_config, with_overrides


@pytest.mark.parametrize("name", ["small", "paper"])
def test_shipped_configs_load(name):
    cfg = load_config(REPO_ROOT / "configs" / f"{name}.yaml")
    assert cfg.name == name
    assert cfg.parse.kinds == ("first_claim", "all_claims", "description")


def test_defaults_when_no_file():
    assert load_config(None) == GraphtxConfig()


def test_unknown_keys_are_errors():
    with pytest.raises(ValueError, match="unknown key.*config.parse: max_nodes"):
        config_from_dict({"parse": {"max_nodes": 5}})


def test_cross_field_checks():
    with pytest.raises(ValueError, match="kinds"):
        ParseConfig(kinds=("claims",))
    with pytest.raises(ValueError, match="workers"):
        config_from_dict({"ingest": {"workers": 0}})


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="configs/"):
        load_config(tmp_path / "nope.yaml")


def test_overrides_ignore_unset_flags():
    cfg = ParseConfig()
    assert with_overrides(cfg, workers=None) is cfg
    assert with_overrides(cfg, workers=3).workers == 3
