"""The ranker directory round-trips; a ranker of another model, or changed files, is refused."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("lightgbm", reason="the learned ranker needs lightgbm (pip install 'graphtx[rank]')")

from graphtx.rank.store import Ranker, load_ranker


def _booster(names, seed=0):
    import lightgbm as lgb

    rng = np.random.default_rng(seed)
    x = rng.random((200, len(names)))
    y = (x[:, 0] > 0.7).astype(int)
    params = {
        "objective": "lambdarank",
        "num_leaves": 3,
        "min_data_in_leaf": 5,
        "verbosity": -1,
        "seed": seed,
        "deterministic": True,
        "num_threads": 1,
    }
    return lgb.train(params, lgb.Dataset(x, y, group=[20] * 10), num_boost_round=5), x


@pytest.fixture()
def saved(tmp_path):
    names = ("bm25", "dense", "year_gap")
    booster, x = _booster(names)
    ranker = Ranker("a" * 64, 50, {"norm": "tmm", "weight": 0.4}, {"learned": names}, {"learned": booster}, {"queries": 10})
    return ranker.save(tmp_path / "ranker"), ranker, x


def test_round_trip(saved):
    directory, ranker, x = saved
    loaded = load_ranker(directory, "a" * 64)
    assert loaded.kinds == ("convex", "learned") and loaded.convex == {"norm": "tmm", "weight": 0.4} and loaded.depth == 50
    assert loaded.features["learned"] == ("bm25", "dense", "year_gap")
    np.testing.assert_array_equal(loaded.boosters["learned"].predict(x), ranker.boosters["learned"].predict(x))
    assert loaded.fingerprint() == ranker.fingerprint()


def test_other_model_refused(saved):
    directory, _, _ = saved
    with pytest.raises(ValueError, match="fitted on model aaaaaaaaaaaa.*not on this model \\(bbbbbbbbbbbb"):
        load_ranker(directory, "b" * 64)


def test_changed_files_refused(saved):
    directory, _, _ = saved
    text = (directory / "learned.txt").read_text()
    (directory / "learned.txt").write_text(text.replace("feature_names=", "feature_names=x", 1))
    with pytest.raises(ValueError, match="do not match its fingerprint"):
        load_ranker(directory, "a" * 64)


def test_missing_ranker_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="rank-fit"):
        load_ranker(tmp_path, "a" * 64)
