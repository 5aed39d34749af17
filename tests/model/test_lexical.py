"""The lexical channel (graphtx/model/lexical.py): a count sketch of IDF-weighted tokens appended to the graph vector."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import torch

from graphtx.model import GraphEncoder
from graphtx.model.batch import collate
from graphtx.model.io import config_yaml, load_model, save_model
from graphtx.model.lexical import LexicalChannel
from tests.model import HashTokenizer, lamp, no_nodes, single_node, snowthrower, tiny_config

VOCAB = 64


def _idf() -> np.ndarray:
    return np.linspace(0.5, 4.0, VOCAB)  # (vocab,) positive, all different


def _model(**changes) -> GraphEncoder:
    model = GraphEncoder(tiny_config(vocab_size=VOCAB, lexical_dim=16, lexical_weight=0.3, **changes), seed=0)
    model.lexical.load_token_idf(_idf())
    return model.eval()


def _hand_weights(graph, channel: LexicalChannel, tokenizer, max_tokens: int) -> dict[int, float]:
    """token -> (1 + log tf) * idf over all node texts of one graph, by hand ([PAD], [UNK] and weight 0 left out)."""
    tokens = [t for ids in tokenizer.encode_batch(list(graph.node_text)) for t in ids[:max_tokens]]
    return {t: (1 + math.log(tf)) * float(channel.idf[t]) for t, tf in Counter(tokens).items() if t >= 2}


def _brute_force(graph, channel: LexicalChannel, tokenizer, max_tokens: int, unit: bool = True) -> np.ndarray:
    """The sketch of one graph by hand: each weight * its sign into its bucket; unit length unless ``unit`` is False."""
    out = np.zeros(channel.dim)
    for token, w in _hand_weights(graph, channel, tokenizer, max_tokens).items():
        out[int(channel.bucket[token])] += w * float(channel.sign[token])
    norm = np.linalg.norm(out)
    return out / norm if unit and norm > 0 else out


def test_sketch_equals_a_brute_force_count_sketch():
    model = _model()
    graphs = [snowthrower(), lamp(), single_node(), no_nodes()]
    tok = HashTokenizer(VOCAB)
    batch = collate(graphs, tok, model.config.max_tokens_per_node)
    got = model.lexical(batch.token_ids, batch.token_node, batch.node_graph, batch.num_graphs).numpy()  # (4, 16)
    want = np.stack([_brute_force(g, model.lexical, tok, model.config.max_tokens_per_node) for g in graphs])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.all(got[3] == 0)  # a graph without nodes: the zero vector


def test_top_tokens_sketch_each_graphs_heaviest_tokens_by_hand():
    """``top_tokens`` (a study option, benchmarks/studies/resketch_vectors.py): the brute-force sketch of each graph's k heaviest
    tokens (ties by token id); at least as many as a graph holds is the full sketch."""
    model = _model()
    graphs = [snowthrower(), lamp(), single_node(), no_nodes()]
    tok = HashTokenizer(VOCAB)
    m = model.config.max_tokens_per_node
    batch = collate(graphs, tok, m)
    for k in (1, 3):
        got = model.lexical(
            batch.token_ids, batch.token_node, batch.node_graph, batch.num_graphs, top_tokens=k
        ).numpy()  # (4, 16)
        for graph, row in zip(graphs, got, strict=True):
            weights = _hand_weights(graph, model.lexical, tok, m)
            kept = sorted(weights, key=lambda t: (-weights[t], t))[:k]
            want = np.zeros(model.lexical.dim)
            for t in kept:
                want[int(model.lexical.bucket[t])] += weights[t] * float(model.lexical.sign[t])
            norm = np.linalg.norm(want)
            np.testing.assert_allclose(row, want / norm if norm > 0 else want, rtol=1e-5, atol=1e-6)
    full = model.lexical(batch.token_ids, batch.token_node, batch.node_graph, batch.num_graphs)
    torch.testing.assert_close(
        model.lexical(batch.token_ids, batch.token_node, batch.node_graph, batch.num_graphs, top_tokens=10_000), full
    )


def test_distinct_tokens_count_what_each_graph_hashes():
    model = _model()
    graphs = [snowthrower(), lamp(), single_node(), no_nodes()]
    tok = HashTokenizer(VOCAB)
    m = model.config.max_tokens_per_node
    batch = collate(graphs, tok, m)
    got = model.lexical.distinct_tokens(batch.token_ids, batch.token_node, batch.node_graph, batch.num_graphs).tolist()
    assert got == [len(_hand_weights(g, model.lexical, tok, m)) for g in graphs] and got[3] == 0 and got[0] > 1


def test_encode_appends_the_channel_and_the_cosine_splits_by_the_weight():
    model = _model()
    tok = HashTokenizer(VOCAB)
    graphs = [snowthrower(), lamp()]
    v = model.encode(graphs, tok)  # (2, out_dim + lexical_dim)
    c = model.config
    assert v.shape == (2, c.out_dim + c.lexical_dim) and model.out_dim == c.out_dim + 16
    torch.testing.assert_close(v.norm(dim=-1), torch.ones(2), rtol=0, atol=1e-5)
    batch = collate(graphs, tok, c.max_tokens_per_node)
    with torch.no_grad():
        g = model(batch)  # (2, out_dim) graph part alone, unit length
    lex = model.lexical(batch.token_ids, batch.token_node, batch.node_graph, batch.num_graphs)  # (2, 16)
    want = 0.7 * float(g[0] @ g[1]) + 0.3 * float(lex[0] @ lex[1])
    assert float(v[0] @ v[1]) == pytest.approx(want, abs=1e-5)


def test_forward_without_lexical_is_the_graph_vector_alone():
    """Forward without ``lexical`` (what ``train.lexical_in_loss: false`` trains on) equals the same model without a channel."""
    with_channel, without = _model(), GraphEncoder(tiny_config(vocab_size=VOCAB), seed=0).eval()
    batch = collate([snowthrower(), lamp()], HashTokenizer(VOCAB), with_channel.config.max_tokens_per_node)
    torch.testing.assert_close(with_channel(batch), without(batch), rtol=0, atol=0)


def test_channel_survives_save_and_load_and_old_configs_keep_their_fingerprint(tmp_path):
    model = _model()
    save_model(tmp_path / "m", model, tokenizer=HashTokenizer(VOCAB))
    loaded = load_model(tmp_path / "m").model
    graphs = [snowthrower(), lamp()]
    torch.testing.assert_close(
        loaded.encode(graphs, HashTokenizer(VOCAB)), model.encode(graphs, HashTokenizer(VOCAB)), rtol=0, atol=0
    )
    assert "lexical" not in config_yaml(tiny_config())  # models saved before the channel keep their fingerprint


@pytest.mark.parametrize(
    "changes",
    [{"lexical_dim": -1}, {"lexical_dim": 8, "lexical_weight": 1.0}, {"lexical_dim": 8, "lexical_weight": 0.0}],
)
def test_bad_settings_are_refused(changes):
    with pytest.raises(ValueError, match="lexical"):
        tiny_config(**changes)


def test_idf_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match="IDF"):
        LexicalChannel(VOCAB, 8).load_token_idf(np.ones(VOCAB - 1))


def test_explanation_splits_the_lexical_cosine_into_shared_tokens():
    """Each listed token's part is w_q(t) w_h(t) / (|l_q| |l_h|), computed here by hand; the rest of the cosine is collisions."""
    from graphtx.index.explain import explain_hits

    model, tok = _model(), HashTokenizer(VOCAB)
    query, hit = snowthrower(), lamp()
    m = model.config.max_tokens_per_node
    (e,) = explain_hits(model, tok, query, [hit], rows=3)
    lex = e.lexical
    wq, wh = _hand_weights(query, model.lexical, tok, m), _hand_weights(hit, model.lexical, tok, m)
    rq, rh = (
        _brute_force(query, model.lexical, tok, m, unit=False),
        _brute_force(hit, model.lexical, tok, m, unit=False),
    )
    norm = np.linalg.norm(rq) * np.linalg.norm(rh)
    parts = sorted(((t, wq[t] * wh[t] / norm) for t in wq.keys() & wh.keys()), key=lambda kv: (-kv[1], kv[0]))
    assert len(parts) > 3  # the query and the hit share more tokens than are listed
    assert [t for t, _ in lex.terms] == [str(t) for t, _ in parts[:3]]  # HashTokenizer has no id_to_token: ids as text
    np.testing.assert_allclose([v for _, v in lex.terms], [v for _, v in parts[:3]], rtol=1e-5)
    cosine = float(rq @ rh / norm)
    assert lex.weight == 0.3 and lex.cosine == pytest.approx(cosine, abs=1e-6)
    assert lex.collisions == pytest.approx(cosine - sum(v for _, v in parts), abs=1e-6)
    assert "lexical" in e.to_json() and "lexical channel" in lex.line()
    (self_e,) = explain_hits(model, tok, query, [query])
    assert self_e.lexical.cosine == pytest.approx(1.0, abs=1e-6)  # a graph against itself


def test_a_model_with_the_channel_names_its_weight_in_its_config():
    """The weight is part of what the vectors mean: written (and fingerprinted) whenever the channel is on."""
    assert "lexical_weight: 0.4" in config_yaml(tiny_config(lexical_dim=8, lexical_weight=0.4))
    assert "lexical_weight" not in config_yaml(tiny_config(lexical_weight=0.25))


def test_a_trained_model_gains_the_channel_without_changing_its_graph_vectors():
    plain = GraphEncoder(tiny_config(vocab_size=VOCAB), seed=3).eval()
    with_channel = plain.with_lexical_channel(16, 0.4, _idf())
    batch = collate([snowthrower(), lamp()], HashTokenizer(VOCAB), plain.config.max_tokens_per_node)
    with torch.no_grad():
        torch.testing.assert_close(with_channel(batch), plain(batch), rtol=0, atol=0)
    assert with_channel.out_dim == plain.out_dim + 16 and with_channel.config.lexical_weight == 0.4
    assert float(with_channel.lexical.idf[5]) == pytest.approx(float(_idf()[5]))
