from __future__ import annotations

import torch

from graphtx.model.moe import DenseMoEHead


def _head() -> DenseMoEHead:
    torch.manual_seed(0)
    head = DenseMoEHead(in_dim=6, out_dim=3, num_experts=4).double()
    torch.nn.init.normal_(head.gate.weight)  # a fresh gate is uniform; make it input-dependent
    return head


def test_gates_sum_to_one_and_output_is_the_explicit_weighted_sum():
    head = _head()
    x = torch.randn(5, 6, dtype=torch.float64)
    y, gates = head(x, return_gates=True)
    assert y.shape == (5, 3) and gates.shape == (5, 4)
    torch.testing.assert_close(gates.sum(-1), torch.ones(5, dtype=torch.float64), rtol=0, atol=1e-12)
    assert len({tuple(r) for r in gates.round(decimals=6).tolist()}) == 5  # gates depend on the input
    W, bias = head.experts.weight.view(4, 3, 6), head.experts.bias.view(4, 3)
    explicit = sum(gates[:, e : e + 1] * (x @ W[e].T + bias[e]) for e in range(4))
    torch.testing.assert_close(y, explicit, rtol=0, atol=1e-12)
    torch.testing.assert_close(head(x), y)


def test_fresh_gate_averages_the_experts():
    head = DenseMoEHead(6, 3, 4).double()
    x = torch.randn(2, 6, dtype=torch.float64)
    torch.testing.assert_close(head(x), head.expert_outputs(x).mean(1))
    assert "experts=4" in repr(head)
