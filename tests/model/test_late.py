"""The late-interaction head and score: batched scores equal the definition, weights, empty graphs."""

from __future__ import annotations

import pytest
import torch

from graphtx.model import GraphEncoder
from graphtx.model.batch import collate
from graphtx.model.late import late_score_brute_force, late_score_matrix
from tests.model import HashTokenizer, lamp, no_nodes, single_node, snowthrower, tiny_config


def _model(**changes) -> GraphEncoder:
    model = GraphEncoder(tiny_config(reduced_dim=0, late_dim=5, **changes), seed=0).double()
    with torch.no_grad():
        model.late.weight.weight.normal_()  # a fresh head weighs nodes uniformly: make the weights differ
    return model.eval()


def test_batched_late_scores_equal_brute_force():
    model = _model()
    tok = HashTokenizer(model.config.vocab_size)
    queries, docs = [snowthrower(), lamp(), no_nodes()], [lamp(), snowthrower(), single_node(), no_nodes()]
    qv, qw, qo = model.encode_nodes(queries, tok)
    dv, _, do = model.encode_nodes(docs, tok)
    qg = torch.repeat_interleave(torch.arange(len(queries)), qo.diff())
    dg = torch.repeat_interleave(torch.arange(len(docs)), do.diff())
    s = late_score_matrix(qv, qw, qg, len(queries), dv, dg, len(docs))  # (3, 4)
    for a in range(len(queries)):
        for b in range(len(docs)):
            ref = late_score_brute_force(qv[qo[a] : qo[a + 1]], qw[qo[a] : qo[a + 1]], dv[do[b] : do[b + 1]])
            assert float(s[a, b]) == pytest.approx(ref, abs=1e-6)
    assert float(s[2].abs().sum()) == 0.0 and float(s[:, 3].abs().sum()) == 0.0  # empty query / empty document score 0
    # a graph against itself: every node's best match is itself (cos 1), weights sum to 1
    assert float(s[0, 1]) == pytest.approx(1.0, abs=1e-6) and float(s[1, 0]) == pytest.approx(1.0, abs=1e-6)


def test_head_outputs_unit_vectors_and_weights_summing_to_one():
    model = _model()
    batch = collate([snowthrower(), lamp()], HashTokenizer(model.config.vocab_size), model.config.max_tokens_per_node)
    out = model(batch, return_details=True)
    torch.testing.assert_close(out.late_vectors.norm(dim=-1), torch.ones(batch.num_nodes, dtype=torch.float64))
    sums = torch.zeros(2, dtype=torch.float64).index_add_(0, batch.node_graph, out.late_weights)
    torch.testing.assert_close(sums, torch.ones(2, dtype=torch.float64))


def test_late_head_is_optional_and_does_not_change_the_other_weights():
    plain = GraphEncoder(tiny_config(reduced_dim=0), seed=0)
    late = GraphEncoder(tiny_config(reduced_dim=0, late_dim=5), seed=0)
    assert plain.late is None and late.late is not None
    for k, v in plain.state_dict().items():
        torch.testing.assert_close(late.state_dict()[k], v)
    with pytest.raises(ValueError, match="late_dim"):
        plain.encode_nodes([lamp()], HashTokenizer(64))


def test_late_scores_are_differentiable():
    model = _model()
    model.train()
    batch = collate([snowthrower(), lamp()], HashTokenizer(model.config.vocab_size), model.config.max_tokens_per_node)
    out = model(batch, return_details=True)
    q = batch.node_graph == 0
    s = late_score_matrix(
        out.late_vectors[q],
        out.late_weights[q],
        batch.node_graph[q],
        1,
        out.late_vectors[~q],
        batch.node_graph[~q] - 1,
        1,
    )
    s.sum().backward()
    assert model.late.proj.weight.grad.abs().sum() > 0 and model.late.weight.weight.grad.abs().sum() > 0
