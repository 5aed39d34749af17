import numpy as np

from graphtx.train.batching import SizeAwareBatcher, shard_for_rank


def _batcher(n=200, seed=0, max_nodes=300, max_pairs=16):
    rng = np.random.default_rng(0)
    sizes = rng.integers(5, 80, n)
    groups = [f"g{i % 7}" for i in range(n)]
    return SizeAwareBatcher(sizes, groups, max_nodes, max_pairs, seed), sizes, groups


def test_every_pair_once_per_epoch_within_budget():
    b, sizes, _ = _batcher()
    for epoch in range(3):
        batches = b.batches(epoch)
        flat = [i for batch in batches for i in batch]
        assert sorted(flat) == list(range(200))
        for batch in batches:
            assert len(batch) <= 16 + 1  # a too-small last batch is merged into the one before
            assert sizes[batch].sum() <= 300 + 80 or len(batch) == 1


def test_size_aware_not_fixed_count():
    sizes = [10] * 50 + [200] * 50
    b = SizeAwareBatcher(sizes, ["a"] * 50 + ["b"] * 50, max_nodes=400, max_pairs=64, seed=0)
    counts = {len(batch) for batch in b.batches(0) if all(sizes[i] == 10 for i in batch)}
    assert max(counts) > 2 * max(len(batch) for batch in b.batches(0) if all(sizes[i] == 200 for i in batch))


def test_deterministic_per_epoch_and_different_across_epochs():
    b1, _, _ = _batcher(seed=3)
    b2, _, _ = _batcher(seed=3)
    assert b1.batches(1) == b2.batches(1)
    assert b1.batches(1) != b1.batches(2)


def test_batches_are_grouped():
    b, _, groups = _batcher(max_pairs=8, max_nodes=10_000)
    pure = sum(len({groups[i] for i in batch}) == 1 for batch in b.batches(0))
    assert pure / len(b.batches(0)) > 0.6


def test_small_last_batch_merged():
    b = SizeAwareBatcher([10] * 9, ["a"] * 9, max_nodes=1000, max_pairs=4, seed=0, min_pairs=2)
    assert all(len(batch) >= 2 for batch in b.batches(0))


def test_shard_for_rank_covers_and_balances():
    sizes = np.array([50, 40, 30, 20, 10, 10])
    shards = shard_for_rank([0, 1, 2, 3, 4, 5], sizes, 2)
    assert sorted(shards[0] + shards[1]) == [0, 1, 2, 3, 4, 5]
    loads = [sizes[s].sum() for s in shards]
    assert abs(loads[0] - loads[1]) <= 10
    assert shard_for_rank([3, 1], sizes, 1) == [[3, 1]]
