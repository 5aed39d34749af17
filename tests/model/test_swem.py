from __future__ import annotations

import numpy as np
import pytest
import torch

from graphtx.model.batch import collate
from graphtx.model.swem import SWEMNodeEncoder
from tests.model import HashTokenizer, lamp, snowthrower


def _encoder(p: float = 0.0) -> SWEMNodeEncoder:
    torch.manual_seed(0)
    enc = SWEMNodeEncoder(vocab_size=64, token_dim=5, node_dim=7, embedding_dropout=p).double()
    torch.nn.init.normal_(enc.type_embedding.weight)  # non-zero, so the type term is checked too
    return enc


def _reference(enc: SWEMNodeEncoder, token_ids, token_node, node_type) -> torch.Tensor:
    """Per-node Python loop: concat(mean, max) of the node's token vectors; zeros for a node without tokens."""
    rows = []
    for i in range(node_type.numel()):
        e = enc.embedding.weight[token_ids[token_node == i]]
        pooled = torch.cat([e.mean(0), e.max(0).values]) if len(e) else torch.zeros(2 * enc.token_dim, dtype=torch.float64)
        rows.append(enc.proj(pooled) + enc.type_embedding.weight[node_type[i]])
    return torch.stack(rows)


def test_mean_max_pooling_matches_per_node_reference():
    enc = _encoder().eval()
    b = collate([snowthrower(), lamp()], HashTokenizer(), max_tokens_per_node=4)
    out = enc(b.token_ids, b.token_node, b.node_type)
    assert out.shape == (b.num_nodes, 7)
    torch.testing.assert_close(out, _reference(enc, b.token_ids, b.token_node, b.node_type), rtol=0, atol=1e-12)


def test_embedding_dropout_removes_whole_token_types_in_train_mode_only():
    enc = _encoder(p=0.5)
    b = collate([snowthrower(), lamp()], HashTokenizer(), max_tokens_per_node=4)
    torch.manual_seed(123)
    keep = torch.rand(64) >= 0.5
    torch.manual_seed(123)
    out = enc.train()(b.token_ids, b.token_node, b.node_type)
    kept = keep[b.token_ids]
    assert 0 < int(kept.sum()) < b.num_tokens  # the seed drops some tokens, not all
    ref = _reference(enc, b.token_ids[kept], b.token_node[kept], b.node_type)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    # eval: no dropout, deterministic
    torch.testing.assert_close(enc.eval()(b.token_ids, b.token_node, b.node_type), _reference(enc, b.token_ids, b.token_node, b.node_type))


def test_token_table_is_initialised_from_a_given_matrix():
    enc = SWEMNodeEncoder(vocab_size=10, token_dim=4, node_dim=6)
    matrix = np.arange(40, dtype=np.float32).reshape(10, 4) / 7
    enc.load_token_vectors(matrix)
    assert torch.equal(enc.embedding.weight.detach(), torch.from_numpy(matrix))
    assert enc.embedding.weight.requires_grad
    with pytest.raises(ValueError, match="shape"):
        enc.load_token_vectors(np.zeros((9, 4)))
    assert "mean+max" in repr(enc)
