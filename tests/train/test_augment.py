import numpy as np
import torch

from graphtx.model.batch import GraphBatch
from graphtx.train.augment import choose_kinds, node_dropout


def test_graph_type_augmentation_never_both_sides():
    kinds = choose_kinds(4000, 0.4, "first_claim", "description", "all_claims", np.random.default_rng(0))
    swapped = [k for k in kinds if k != ("first_claim", "description")]
    assert all(k in (("all_claims", "description"), ("first_claim", "all_claims")) for k in swapped)
    assert 0.37 < len(swapped) / 4000 < 0.43
    sides = sum(k[0] == "all_claims" for k in swapped) / len(swapped)
    assert 0.45 < sides < 0.55


def _batch(sizes):
    node_graph = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    n = int(sum(sizes))
    src = torch.arange(n - 1)
    dst = torch.arange(1, n)
    same = node_graph[src] == node_graph[dst]
    token_node = torch.repeat_interleave(torch.arange(n), 2)
    return GraphBatch(
        token_ids=torch.arange(2 * n) + 2,
        token_node=token_node,
        node_graph=node_graph,
        node_type=torch.zeros(n, dtype=torch.long),
        edge_index=torch.stack([src[same], dst[same]]),
        edge_type=torch.zeros(int(same.sum()), dtype=torch.long),
        num_graphs=len(sizes),
    )


def test_node_dropout_rate_grows_with_size_and_keeps_graphs_valid():
    sizes = [2] * 200 + [200] * 20
    b = _batch(sizes)
    out = node_dropout(b, 0.5, 20, torch.Generator().manual_seed(0))
    kept = torch.bincount(out.node_graph, minlength=b.num_graphs)
    assert (kept >= 1).all() and out.num_graphs == b.num_graphs
    small_rate = 1 - kept[:200].sum().item() / 400
    big_rate = 1 - kept[200:].sum().item() / 4000
    assert small_rate < 0.15 and 0.4 < big_rate < 0.5  # p(2) = 0.045, p(200) = 0.4545
    # edges connect kept nodes of one graph; tokens follow their node
    assert out.edge_index.max() < out.num_nodes
    assert (out.node_graph[out.edge_index[0]] == out.node_graph[out.edge_index[1]]).all()
    assert torch.equal(out.token_node, torch.sort(out.token_node).values)
    assert (torch.bincount(out.token_node, minlength=out.num_nodes) == 2).all()


def test_node_dropout_off_is_identity():
    b = _batch([3, 4])
    assert node_dropout(b, 0.0, 20, torch.Generator()) is b
