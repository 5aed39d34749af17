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


def test_idf_weighted_mean_matches_per_node_reference_and_uniform_weights_give_the_plain_mean():
    torch.manual_seed(0)
    enc = SWEMNodeEncoder(vocab_size=64, token_dim=5, node_dim=7, weighting="idf").double().eval()
    idf = torch.linspace(1.0, 6.0, 64, dtype=torch.float64)
    enc.load_token_weights(idf)
    b = collate([snowthrower(), lamp()], HashTokenizer(), max_tokens_per_node=4)
    rows = []
    for i in range(b.num_nodes):
        ids = b.token_ids[b.token_node == i]
        e, w = enc.embedding.weight[ids], idf[ids].unsqueeze(1)
        pooled = torch.cat([(w * e).sum(0) / w.sum(), e.max(0).values]) if len(e) else torch.zeros(10, dtype=torch.float64)
        rows.append(enc.proj(pooled) + enc.type_embedding.weight[b.node_type[i]])
    torch.testing.assert_close(enc(b.token_ids, b.token_node, b.node_type), torch.stack(rows), rtol=0, atol=1e-10)

    plain = SWEMNodeEncoder(vocab_size=64, token_dim=5, node_dim=7).double().eval()
    plain.load_state_dict({k: v for k, v in enc.state_dict().items() if k != "token_log_weight"})
    enc.load_token_weights(torch.full((64,), 3.0))
    torch.testing.assert_close(enc(b.token_ids, b.token_node, b.node_type), plain(b.token_ids, b.token_node, b.node_type))


def test_a_rare_token_moves_its_node_more_under_idf_weighting():
    """A node 'common common rare': IDF weighting pulls its mean towards the rare token's vector."""
    torch.manual_seed(0)
    for weighting, expect_closer in (("none", False), ("idf", True)):
        enc = SWEMNodeEncoder(vocab_size=3, token_dim=4, node_dim=4, weighting=weighting).eval()
        with torch.no_grad():
            enc.embedding.weight.copy_(torch.eye(3, 4))
        if weighting == "idf":
            enc.load_token_weights(torch.tensor([1.0, 1.0, 10.0]))
        ids = torch.tensor([0, 1, 2])
        e = enc.embedding(ids)
        w = enc.token_log_weight.exp()[ids].unsqueeze(1) if weighting == "idf" else torch.ones(3, 1)
        mean = (w * e).sum(0) / w.sum()
        assert (float(mean[2]) > 0.5) is expect_closer


def test_learned_weights_get_gradients_and_bad_weights_are_refused():
    enc = SWEMNodeEncoder(vocab_size=64, token_dim=5, node_dim=7, weighting="learned")
    b = collate([snowthrower()], HashTokenizer(), max_tokens_per_node=4)
    enc(b.token_ids, b.token_node, b.node_type).sum().backward()
    assert enc.token_log_weight.grad is not None and enc.token_log_weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="positive"):
        enc.load_token_weights(torch.zeros(64))
    with pytest.raises(ValueError, match="no token weighting"):
        SWEMNodeEncoder(vocab_size=64, token_dim=5, node_dim=7).load_token_weights(torch.ones(64))
