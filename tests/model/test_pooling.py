from __future__ import annotations

import torch

from graphtx.model.pooling import WeightedPooling


def _inputs():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(7, 5, dtype=torch.float64, generator=gen)
    node_graph = torch.tensor([0, 0, 0, 2, 2, 2, 2])  # graph 1 has no nodes
    return x, node_graph


def test_weights_are_a_softmax_per_graph_and_pooling_is_their_weighted_sum():
    x, node_graph = _inputs()
    pool = WeightedPooling(5).double()
    torch.nn.init.normal_(pool.score.weight)
    g, p = pool(x, node_graph, num_graphs=3)
    assert g.shape == (3, 5) and p.shape == (7,)
    s = pool.score(x).squeeze(-1)
    for graph in (0, 2):
        nodes = node_graph == graph
        ref_p = s[nodes].softmax(0)
        torch.testing.assert_close(p[nodes], ref_p, rtol=0, atol=1e-12)
        torch.testing.assert_close(g[graph], (ref_p[:, None] * x[nodes]).sum(0), rtol=0, atol=1e-12)
    torch.testing.assert_close(g[1], torch.zeros(5, dtype=torch.float64))  # empty graph → zeros


def test_fresh_pooling_is_mean_pooling():
    x, node_graph = _inputs()
    g, p = WeightedPooling(5).double()(x, node_graph, num_graphs=3)
    torch.testing.assert_close(g[0], x[:3].mean(0))
    torch.testing.assert_close(p, torch.tensor([1 / 3] * 3 + [1 / 4] * 4, dtype=torch.float64))
    assert "softmax per graph" in repr(WeightedPooling(5))
