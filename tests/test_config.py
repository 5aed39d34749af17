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


def test_extends_merges_sections_key_by_key(tmp_path):
    (tmp_path / "base.yaml").write_text("name: base\nseed: 3\nparse: {workers: 2, max_feature_nodes: 50}\n")
    (tmp_path / "child.yaml").write_text("extends: base.yaml\nname: child\nparse: {workers: 1}\n")
    cfg = load_config(tmp_path / "child.yaml")
    assert (cfg.name, cfg.seed) == ("child", 3)
    assert (cfg.parse.workers, cfg.parse.max_feature_nodes) == (1, 50)


def test_extends_loop_and_missing_parent_are_clear_errors(tmp_path):
    (tmp_path / "a.yaml").write_text("extends: b.yaml\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    with pytest.raises(ValueError, match="loops back"):
        load_config(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("extends: nope.yaml\n")
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        load_config(tmp_path / "c.yaml")


def test_demo_config_is_small_with_a_random_split():
    small, demo = (load_config(REPO_ROOT / "configs" / f"{n}.yaml") for n in ("small", "demo"))
    assert demo.model == small.model and demo.parse == small.parse
    assert demo.train.split == "random"
