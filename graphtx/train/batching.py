"""Size-aware dynamic batches grouped by class.

A batch is a list of pair indices whose graphs together stay under a node budget
(``max_nodes_per_batch``) and a pair cap, rather than a fixed count: a batch of
big description graphs holds few pairs, one of small graphs many.

Grouping makes in-batch negatives hard: the pairs of an epoch are shuffled within
their group (IPC/CPC class or text cluster of the citing document), groups are
laid end to end in a shuffled order, the sequence is cut into batches, and the
batches are shuffled. Most batches thus hold one group, and the negatives an
anchor sees are documents of its own field.

Batches are a pure function of (seed, epoch): the sampler's position is just
(epoch, batch index), which is what a checkpoint stores for exact resume.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np


class SizeAwareBatcher:
    def __init__(
        self, sizes: Sequence[int], groups: Sequence[str], max_nodes: int, max_pairs: int, seed: int, min_pairs: int = 2
    ):
        """sizes[i]: nodes of pair i (citing + cited graph); groups[i]: its group key.

        A batch with fewer than ``min_pairs`` pairs (no negatives, or an idle DDP rank) is
        merged into the batch before it.
        """
        if len(sizes) != len(groups):
            raise ValueError("sizes and groups differ in length")
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.groups = list(groups)
        self.max_nodes, self.max_pairs, self.seed, self.min_pairs = max_nodes, max_pairs, seed, min_pairs
        self._by_group: dict[str, list[int]] = defaultdict(list)
        for i, g in enumerate(self.groups):
            self._by_group[g].append(i)
        self._cache: tuple[int, list[list[int]]] | None = None

    def __len__(self) -> int:
        """Batches in epoch 0 (other epochs differ by a few at most)."""
        return len(self.batches(0))

    def batches(self, epoch: int) -> list[list[int]]:
        if self._cache and self._cache[0] == epoch:
            return self._cache[1]
        rng = np.random.default_rng([self.seed, epoch])
        keys = sorted(self._by_group)
        order: list[int] = []
        for gi in rng.permutation(len(keys)):
            members = np.asarray(self._by_group[keys[gi]])
            order.extend(members[rng.permutation(len(members))].tolist())
        batches, current, nodes = [], [], 0
        for i in order:
            size = int(self.sizes[i])
            if current and (nodes + size > self.max_nodes or len(current) == self.max_pairs):
                batches.append(current)
                current, nodes = [], 0
            current.append(i)
            nodes += size
        if current:
            if batches and len(current) < self.min_pairs:
                batches[-1].extend(current)
            else:
                batches.append(current)
        batches = [batches[j] for j in rng.permutation(len(batches))]
        self._cache = (epoch, batches)
        return batches


def shard_for_rank(batch: list[int], sizes: np.ndarray, world_size: int) -> list[list[int]]:
    """Split one global batch over ranks, balancing nodes (largest first to the lightest rank).

    Deterministic; each rank's list keeps the batch's order. A rank may get nothing
    when the batch has fewer pairs than ranks.
    """
    load = [0] * world_size
    owner = {}
    for i in sorted(batch, key=lambda j: (-int(sizes[j]), j)):
        r = min(range(world_size), key=lambda x: (load[x], x))
        owner[i] = r
        load[r] += int(sizes[i])
    return [[i for i in batch if owner[i] == r] for r in range(world_size)]
