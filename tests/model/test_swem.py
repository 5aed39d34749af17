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
        pooled = (
            torch.cat([e.mean(0), e.max(0).values]) if len(e) else torch.zeros(2 * enc.token_dim, dtype=torch.float64)
        )
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
    torch.testing.assert_close(
        enc.eval()(b.token_ids, b.token_node, b.node_type), _reference(enc, b.token_ids, b.token_node, b.node_type)
    )


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
        pooled = (
            torch.cat([(w * e).sum(0) / w.sum(), e.max(0).values]) if len(e) else torch.zeros(10, dtype=torch.float64)
        )
        rows.append(enc.proj(pooled) + enc.type_embedding.weight[b.node_type[i]])
    torch.testing.assert_close(enc(b.token_ids, b.token_node, b.node_type), torch.stack(rows), rtol=0, atol=1e-10)

    plain = SWEMNodeEncoder(vocab_size=64, token_dim=5, node_dim=7).double().eval()
    plain.load_state_dict({k: v for k, v in enc.state_dict().items() if k != "token_log_weight"})
    enc.load_token_weights(torch.full((64,), 3.0))
    torch.testing.assert_close(
        enc(b.token_ids, b.token_node, b.node_type), plain(b.token_ids, b.token_node, b.node_type)
    )


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


def _ngram_reference(enc: SWEMNodeEncoder, token_ids, token_node, node_type) -> torch.Tensor:
    """Per-node loop with word order: [mean ; max ; per width: mean ; max of GELU(layer(window))] over the node's own windows."""
    rows = []
    for i in range(node_type.numel()):
        e = enc.embedding.weight[token_ids[token_node == i]]
        parts = [e.mean(0), e.max(0).values] if len(e) else [torch.zeros(enc.token_dim, dtype=torch.float64)] * 2
        for width, layer in zip(enc.widths, enc.ngram):
            windows = [torch.cat(list(e[k : k + width])) for k in range(len(e) - width + 1)]
            g = torch.nn.functional.gelu(layer(torch.stack(windows))) if windows else None
            parts += (
                [g.mean(0), g.max(0).values] if g is not None else [torch.zeros(enc.token_dim, dtype=torch.float64)] * 2
            )
        rows.append(enc.proj(torch.cat(parts)) + enc.type_embedding.weight[node_type[i]])
    return torch.stack(rows)


@pytest.mark.parametrize("order", ["bigram", "trigram"])
def test_word_order_pooling_matches_per_node_reference(order):
    torch.manual_seed(0)
    enc = SWEMNodeEncoder(vocab_size=64, token_dim=5, node_dim=7, word_order=order).double().eval()
    b = collate([snowthrower(), lamp()], HashTokenizer(), max_tokens_per_node=4)
    out = enc(b.token_ids, b.token_node, b.node_type)
    assert enc.proj.in_features == (4 if order == "bigram" else 6) * 5
    torch.testing.assert_close(out, _ngram_reference(enc, b.token_ids, b.token_node, b.node_type), rtol=0, atol=1e-12)


@pytest.mark.parametrize("order", ["bigram", "trigram"])
def test_word_order_gradients_match_the_per_node_reference(order):
    """The windows' gathers (index_select) send every gradient to the token rows and layers the reference's do."""
    torch.manual_seed(0)
    enc = SWEMNodeEncoder(vocab_size=64, token_dim=5, node_dim=7, word_order=order).double().eval()
    b = collate([snowthrower(), lamp()], HashTokenizer(), max_tokens_per_node=4)
    weight = torch.randn(b.num_nodes, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    grads = []
    for forward in (enc, lambda *a: _ngram_reference(enc, *a)):
        enc.zero_grad(set_to_none=True)
        (forward(b.token_ids, b.token_node, b.node_type) * weight).sum().backward()
        grads.append({name: p.grad for name, p in enc.named_parameters()})
    assert all(float(grads[0][f"ngram.{i}.weight"].abs().sum()) > 0 for i in range(len(enc.widths)))
    for name, dense in grads[1].items():
        torch.testing.assert_close(grads[0][name], dense, rtol=1e-9, atol=1e-12, msg=name)


def test_word_order_tells_reordered_tokens_apart_and_never_reads_across_nodes():
    torch.manual_seed(0)
    bag, ordered = SWEMNodeEncoder(16, 4, 6).eval(), SWEMNodeEncoder(16, 4, 6, word_order="bigram").eval()
    types = torch.zeros(2, dtype=torch.long)
    nodes = torch.tensor([0, 0, 0, 1, 1])
    forward, backward = torch.tensor([3, 4, 5, 6, 7]), torch.tensor([5, 4, 3, 6, 7])  # node 0 read the other way round
    assert torch.allclose(bag(forward, nodes, types), bag(backward, nodes, types))
    assert not torch.allclose(ordered(forward, nodes, types)[0], ordered(backward, nodes, types)[0])
    torch.testing.assert_close(
        ordered(forward, nodes, types)[1], ordered(backward, nodes, types)[1]
    )  # node 1 untouched
    other_next = torch.tensor([3, 4, 5, 9, 7])  # only node 1's first token changes: no window of node 0 reaches it
    torch.testing.assert_close(ordered(forward, nodes, types)[0], ordered(other_next, nodes, types)[0])
    trigram = SWEMNodeEncoder(16, 4, 6, word_order="trigram").eval()
    for tokens in ([], [3], [3, 4]):  # fewer tokens in the whole batch than a window: no window, no error
        ids = torch.tensor(tokens, dtype=torch.long)
        assert trigram(ids, torch.zeros(len(tokens), dtype=torch.long), torch.zeros(1, dtype=torch.long)).shape == (
            1,
            6,
        )
    single = ordered(
        torch.tensor([3]), torch.tensor([0]), torch.zeros(1, dtype=torch.long)
    )  # one token: no pair, zeros there
    pooled = torch.cat([ordered.embedding.weight[3], ordered.embedding.weight[3], torch.zeros(8)])
    torch.testing.assert_close(single[0], ordered.proj(pooled))


def test_projection_with_word_order_round_trips_through_a_tokens_directory_file(tmp_path):
    from graphtx.text.pretrain import NODE_PROJECTION_FILE, NodeProjection, load_node_projection

    torch.manual_seed(0)
    source, target = SWEMNodeEncoder(16, 4, 6, word_order="trigram"), SWEMNodeEncoder(16, 4, 6, word_order="trigram")
    weight, bias, ngram = source.projection_arrays()
    np.savez(tmp_path / NODE_PROJECTION_FILE, **NodeProjection(weight, bias, "trigram", ngram).arrays())
    back = load_node_projection(tmp_path)
    assert back.word_order == "trigram" and [w.shape for w, _ in back.ngram] == [(4, 8), (4, 12)]
    target.load_projection(back.weight, back.bias, back.ngram)
    target.load_token_vectors(source.embedding.weight.detach())  # the table travels in token_vectors.npy
    ids, nodes, types = torch.tensor([1, 2, 3, 4]), torch.tensor([0, 0, 0, 1]), torch.zeros(2, dtype=torch.long)
    torch.testing.assert_close(source.eval()(ids, nodes, types), target.eval()(ids, nodes, types))
    with pytest.raises(ValueError, match="n-gram layers given"):
        SWEMNodeEncoder(16, 4, 6, word_order="bigram").load_projection(back.weight, back.bias, back.ngram)
    np.savez(
        tmp_path / NODE_PROJECTION_FILE, weight=np.zeros((6, 8)), bias=np.zeros(6)
    )  # a file from before word order
    assert load_node_projection(tmp_path).word_order == "none" and load_node_projection(tmp_path).ngram == ()


def test_an_unknown_word_order_is_refused():
    from graphtx.model.config import ModelConfig

    with pytest.raises(ValueError, match="node word order"):
        SWEMNodeEncoder(16, 4, 6, word_order="skipgram")
    with pytest.raises(ValueError, match="model.word_order"):
        ModelConfig(word_order="skipgram")
