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
    ranker = Ranker(
        "a" * 64, 50, {"norm": "tmm", "weight": 0.4}, {"learned": names}, {"learned": booster}, {"queries": 10}
    )
    return ranker.save(tmp_path / "ranker"), ranker, x


def test_round_trip(saved):
    directory, ranker, x = saved
    loaded = load_ranker(directory, "a" * 64)
    assert (
        loaded.kinds == ("convex", "learned") and loaded.convex == {"norm": "tmm", "weight": 0.4} and loaded.depth == 50
    )
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


def test_a_bag_averages_its_members_and_round_trips(tmp_path):
    """rank.bag: the members' scores and contributions averaged; saved in one file; read back member by member."""
    from graphtx.rank.learned import BoosterBag

    names = ("bm25", "dense", "year_gap")
    (a, x), (b, _) = _booster(names, seed=0), _booster(names, seed=1)
    bag = BoosterBag([a, b])
    np.testing.assert_allclose(bag.predict(x), (a.predict(x) + b.predict(x)) / 2)
    contrib = bag.predict(x, pred_contrib=True)  # (n, F + 1): still an exact split of the averaged score
    np.testing.assert_allclose(contrib.sum(axis=1), bag.predict(x), atol=1e-9)
    ranker = Ranker("a" * 64, 50, {"norm": "tmm", "weight": 0.4}, {"learned": names}, {"learned": bag})
    loaded = load_ranker(ranker.save(tmp_path / "ranker"), "a" * 64).boosters["learned"]
    assert len(loaded.members) == 2
    np.testing.assert_array_equal(loaded.predict(x), bag.predict(x))


def test_a_plain_lightgbm_file_reads_as_a_bag_of_one(saved):
    directory, ranker, x = saved  # saved from a bare lightgbm.Booster, as rankers were before rank.bag
    loaded = load_ranker(directory, "a" * 64).boosters["learned"]
    assert len(loaded.members) == 1
    np.testing.assert_array_equal(loaded.predict(x), ranker.boosters["learned"].predict(x))


def test_fit_bag_uses_consecutive_seeds_and_reports_every_member():
    from graphtx.rank.config import RankConfig
    from graphtx.rank.convex import Group
    from graphtx.rank.learned import fit_bag, fit_lambdarank

    rng = np.random.default_rng(0)
    names = ("bm25", "dense")
    groups = []
    for q in range(40):
        x = rng.random((30, 2)).astype(np.float32)
        gains = (x[:, 0] + 0.3 * rng.random(30) > 0.9).astype(np.float64)
        groups.append(Group(f"q{q}", x[:, 0], x[:, 1], gains, np.sort(gains)[::-1], x))
    cfg = RankConfig(bag=3, folds=3, min_data_in_leaf=5, num_leaves_grid=(3,), max_rounds=20)
    bag, report = fit_bag(groups, names, cfg, seed=7)
    assert len(bag.members) == 3 and len(report["bag"]) == 3
    x = groups[0].features
    singles = [fit_lambdarank(groups, names, cfg, seed)[0].predict(x) for seed in (7, 8, 9)]
    assert not np.allclose(singles[0], singles[1])  # the seeds make different members
    np.testing.assert_allclose(bag.predict(x), np.mean(singles, axis=0))
    with pytest.raises(ValueError, match="bag"):
        RankConfig(bag=0)
