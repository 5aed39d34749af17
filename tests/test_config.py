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


# --- one strict from-dict (graphtx/from_dict.py) and stage-owned configs -----------------


def test_unknown_key_names_where_the_closest_known_key_and_all_known_keys():
    from graphtx.from_dict import from_dict
    from graphtx.model.config import ModelConfig

    with pytest.raises(
        ValueError,
        match=r"unknown key\(s\) in config\.parse: max_nodes \(did you mean max_feature_nodes\?\); known: spacy_model, ",
    ):
        config_from_dict({"parse": {"max_nodes": 5}})
    with pytest.raises(ValueError, match=r"in model config /m/config\.yaml: width; known: vocab_size"):
        ModelConfig.from_dict({"width": 3}, "model config /m/config.yaml")
    with pytest.raises(ValueError, match=r"config\.serve must be a mapping of key: value, got list"):
        config_from_dict({"serve": [1, 2]})
    assert from_dict(ParseConfig, {"kinds": ["description"]}, "x").kinds == ("description",)  # YAML lists become tuples
    assert config_from_dict({"parse": None}).parse == ParseConfig()  # an empty section is the defaults


def test_a_removed_key_names_the_key_and_why_it_went(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("train:\n  pretrain_cloze_weight: 1.0\n")
    with pytest.raises(
        ValueError,
        match=r"config\.train: pretrain_cloze_weight \(removed: inverse-cloze pre-training, negative in benchmarks/",
    ):
        load_config(path)
    with pytest.raises(ValueError, match=r"pretrain_lexical_in_loss \(removed: "):
        config_from_dict({"train": {"pretrain_lexical_in_loss": False}})
    with pytest.raises(ValueError, match=r"pretrain_teacher_target \(removed: the teacher's cosine margins"):
        config_from_dict({"train": {"pretrain_teacher_target": "margins"}})


def test_known_only_ignores_fields_of_another_version():
    from graphtx.from_dict import known_only

    cfg = known_only(ParseConfig, {"workers": 2, "kinds": ["first_claim"], "field_of_a_newer_graphtx": 1})
    assert (cfg.workers, cfg.kinds) == (2, ("first_claim",))
    assert known_only(ParseConfig, None) == ParseConfig()


def test_each_stage_config_lives_beside_its_stage_and_is_re_exported():
    import graphtx.config as assembled
    from graphtx.corpus.config import IngestConfig
    from graphtx.eval.config import EvalConfig
    from graphtx.graphs.config import ParseConfig as StageParseConfig
    from graphtx.index.config import IndexConfig, SearchConfig
    from graphtx.rank.config import RankConfig
    from graphtx.serve.config import ServeConfig
    from graphtx.text.config import PretrainConfig

    for cls in (
        IngestConfig,
        EvalConfig,
        StageParseConfig,
        IndexConfig,
        SearchConfig,
        RankConfig,
        ServeConfig,
        PretrainConfig,
    ):
        assert getattr(assembled, cls.__name__) is cls
    assert StageParseConfig().rules_path == REPO_ROOT / "rules"


@pytest.mark.timeout(120)
def test_stages_do_not_import_the_assembled_config():
    """graphtx.config sits above every stage (it imports them all): a stage module that imported it would pull every
    later stage's config in (and make corpus/ and config.py depend on each other). Checked in a fresh interpreter."""
    import subprocess
    import sys

    stages = [
        "graphtx.corpus.ingest",
        "graphtx.graphs.parse",
        "graphtx.text.pretrain",
        "graphtx.train.run",
        "graphtx.index.search",
        "graphtx.index.build",
        "graphtx.rank.learned",
        "graphtx.serve.app",
        "graphtx.eval.command",
        "graphtx.eval.phrases",
    ]
    code = f"import importlib, sys\nfor m in {stages!r}:\n    importlib.import_module(m)\nassert 'graphtx.config' not in sys.modules, 'imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=100, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
