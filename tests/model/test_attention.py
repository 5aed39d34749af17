from __future__ import annotations

import pytest
import torch

from graphtx.model.attention import SparseGraphAttention, attention_edges
from graphtx.model.batch import collate
from tests.model import HashTokenizer, lamp, snowthrower


def _batch():
    return collate([snowthrower(), lamp()], HashTokenizer(), max_tokens_per_node=4)


def _attention(qk_norm: bool) -> SparseGraphAttention:
    torch.manual_seed(0)
    attn = (
        SparseGraphAttention(dim=12, heads=3, qk_norm=qk_norm, qk_scale_init=4.0, edge_type_bias=True).double().eval()
    )
    with torch.no_grad():
        attn.edge_bias.normal_()  # non-zero biases, so the edge kinds matter
        if qk_norm:
            attn.qk_scale.uniform_(1.0, 5.0)
    return attn


def test_attention_edges_both_directions_and_one_self_loop():
    edge_index = torch.tensor([[1, 2, 2], [0, 0, 2]])  # last one is a self loop: dropped, then re-added once
    edge_type = torch.tensor([0, 2, 1])
    index, kind = attention_edges(edge_index, edge_type, num_nodes=3)
    assert index.tolist() == [[1, 2, 0, 0, 0, 1, 2], [0, 0, 1, 2, 0, 1, 2]]
    assert kind.tolist() == [0, 2, 3, 5, 6, 6, 6]


def _dense_attention(attn, b, x, qk_norm):
    """The dense reference: i attends to j iff j → i is a graph edge (either direction) or i == j."""
    n, h, d = b.num_nodes, attn.heads, attn.head_dim
    index, kind = attention_edges(b.edge_index, b.edge_type, n)
    src, dst = index
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[dst, src] = True
    bias = torch.zeros(h, n, n, dtype=torch.float64)
    bias[:, dst, src] = attn.edge_bias[kind].T
    q, k, v = (lin(x).view(n, h, d).transpose(0, 1) for lin in (attn.q, attn.k, attn.v))  # (h, n, d)
    if qk_norm:
        q, k = torch.nn.functional.normalize(q, dim=-1), torch.nn.functional.normalize(k, dim=-1)
        logits = q @ k.transpose(1, 2) * attn.qk_scale.view(h, 1, 1)
    else:
        logits = q @ k.transpose(1, 2) / d**0.5
    logits = (logits + bias).masked_fill(~mask, float("-inf"))
    return attn.out((logits.softmax(-1) @ v).transpose(0, 1).reshape(n, h * d))


@pytest.mark.parametrize("qk_norm", [True, False])
def test_sparse_attention_equals_dense_masked_attention(qk_norm):
    b = _batch()
    attn = _attention(qk_norm)
    x = torch.randn(b.num_nodes, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    out = attn(x, b.edge_index, b.edge_type)
    torch.testing.assert_close(out, _dense_attention(attn, b, x, qk_norm), rtol=0, atol=1e-12)


@pytest.mark.parametrize("qk_norm", [True, False])
def test_sparse_attention_gradients_equal_the_dense_references(qk_norm):
    """The sparse gathers' backward (index_select: rows summed by index_add) gives the dense attention's gradients,
    for the input, every projection, the QK scale and the edge-kind bias."""
    b = _batch()
    attn = _attention(qk_norm)
    x = torch.randn(b.num_nodes, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    weight = torch.randn(b.num_nodes, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    grads = []
    for forward in (lambda xx: attn(xx, b.edge_index, b.edge_type), lambda xx: _dense_attention(attn, b, xx, qk_norm)):
        attn.zero_grad(set_to_none=True)
        xx = x.clone().requires_grad_(True)
        (forward(xx) * weight).sum().backward()
        grads.append([xx.grad] + [p.grad for p in attn.parameters()])
    assert len(grads[0]) == len(grads[1]) > 5
    for sparse, dense in zip(*grads):
        assert sparse is not None and float(sparse.abs().sum()) > 0
        torch.testing.assert_close(sparse, dense, rtol=1e-9, atol=1e-12)


def test_attention_weights_sum_to_one_over_incoming_edges():
    b = _batch()
    attn = _attention(True)
    x = torch.randn(b.num_nodes, 12, dtype=torch.float64)
    out, alpha, index = attn(x, b.edge_index, b.edge_type, return_attention=True)
    assert out.shape == x.shape
    assert index.shape == (2, 2 * b.edge_index.size(1) + b.num_nodes) and alpha.shape == (index.size(1), 3)
    assert bool((alpha >= 0).all())
    sums = torch.zeros(b.num_nodes, 3, dtype=torch.float64).index_add_(0, index[1], alpha)
    torch.testing.assert_close(sums, torch.ones_like(sums), rtol=0, atol=1e-12)


def test_nodes_without_edges_attend_to_themselves():
    attn = _attention(False)
    x = torch.randn(4, 12, dtype=torch.float64)
    empty = torch.zeros(2, 0, dtype=torch.long)
    out, alpha, _ = attn(x, empty, torch.zeros(0, dtype=torch.long), return_attention=True)
    torch.testing.assert_close(alpha, torch.ones(4, 3, dtype=torch.float64))
    torch.testing.assert_close(out, attn.out(attn.v(x)))


def test_repr_and_head_size_check():
    assert "qk_norm" in repr(_attention(True)) and "1/sqrt" in repr(_attention(False))
    with pytest.raises(AssertionError):
        SparseGraphAttention(dim=10, heads=3)
