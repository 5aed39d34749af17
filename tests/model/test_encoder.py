from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
import torch

from graphtx.config import REPO_ROOT, load_config
from graphtx.model import GraphEncoder, ModelConfig
from graphtx.model.batch import collate
from tests.model import (
    HashTokenizer,
    lamp,
    no_nodes,
    permuted,
    single_node,
    snowthrower,
    tiny_config,
)

PAPER_BASE, PAPER_REDUCED = 156e6, 161e6


def _model(**changes) -> GraphEncoder:
    model = GraphEncoder(tiny_config(**changes), seed=0).double()
    with torch.no_grad():  # fresh pooling scores / gates / biases are zero or constant: randomise them
        model.pool.score.weight.normal_()
        for block in model.blocks:
            block.attn.edge_bias.normal_()
        if model.moe is not None:
            model.moe.gate.weight.normal_()
    return model.eval()


def _batch(graphs, model):
    return collate(graphs, HashTokenizer(model.config.vocab_size), model.config.max_tokens_per_node)


# --- invariants ----------------------------------------------------------------


@pytest.mark.parametrize("reduced_dim", [0, 6])
def test_node_order_does_not_matter(reduced_dim):
    model = _model(reduced_dim=reduced_dim)
    g = snowthrower()
    perm = [5, 2, 7, 0, 4, 1, 6, 3]
    a = model(_batch([g], model), return_details=True)
    b = model(_batch([permuted(g, perm)], model), return_details=True)
    torch.testing.assert_close(a.vectors, b.vectors, rtol=0, atol=1e-12)
    torch.testing.assert_close(a.node_states[perm], b.node_states, rtol=0, atol=1e-12)
    torch.testing.assert_close(a.node_weights[perm], b.node_weights, rtol=0, atol=1e-12)


def test_batch_gives_the_same_vectors_as_each_graph_alone():
    model = _model()
    graphs = [snowthrower(), no_nodes(), lamp(), single_node()]
    together = model(_batch(graphs, model))
    alone = torch.cat([model(_batch([g], model)) for g in graphs])
    torch.testing.assert_close(together, alone, rtol=0, atol=1e-12)
    norms = together.norm(dim=-1)
    torch.testing.assert_close(
        norms, torch.tensor([1.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    )  # empty graph → zero vector
    torch.testing.assert_close(model.encode(graphs, HashTokenizer(), batch_size=3), together)


def test_details():
    model = _model()
    b = _batch([snowthrower(), lamp()], model)
    out = model(b, return_details=True)
    c = model.config
    assert out.vectors.shape == (2, c.reduced_dim) and out.node_states.shape == (b.num_nodes, c.node_dim)
    assert len(out.attention) == c.layers and out.gates.shape == (2, c.num_experts)
    assert out.attention_edges.shape == (2, 2 * b.edge_index.size(1) + b.num_nodes)
    for alpha in out.attention:
        sums = torch.zeros(b.num_nodes, c.heads, dtype=alpha.dtype).index_add_(0, out.attention_edges[1], alpha)
        torch.testing.assert_close(sums, torch.ones_like(sums))
    per_graph = torch.zeros(2, dtype=torch.float64).index_add_(0, b.node_graph, out.node_weights)
    torch.testing.assert_close(per_graph, torch.ones(2, dtype=torch.float64))
    raw = model(b, normalize=False)
    torch.testing.assert_close(torch.nn.functional.normalize(raw, dim=-1), out.vectors)


@pytest.mark.parametrize("reduced_dim", [0, 6])
def test_gradient_reaches_every_parameter(reduced_dim):
    model = _model(reduced_dim=reduced_dim).train()
    b = _batch([snowthrower(), lamp(), single_node()], model)
    target = torch.randn(3, model.out_dim, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    (model(b) * target).sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name
        if (
            name == "pool.score.bias"
        ):  # shifts every score of a graph alike: the per-graph softmax ignores it, its gradient is 0
            assert float(p.grad.abs().sum()) < 1e-12, (
                name
            )  # (exactly 0 or rounding, by test order: not a "reaches" check)
            continue
        assert bool(p.grad.abs().sum() > 0), name


def test_with_reduction_keeps_the_base_model_under_a_new_head():
    base = _model(reduced_dim=0)
    reduced = base.with_reduction(reduced_dim=5, num_experts=2, seed=1).eval()
    assert reduced.config == dataclasses.replace(base.config, reduced_dim=5, num_experts=2)
    assert reduced.out_dim == 5 and base.out_dim == base.config.base_dim
    b = _batch([snowthrower(), lamp()], base)
    expected = torch.nn.functional.normalize(reduced.moe(base(b, normalize=False)), dim=-1)
    torch.testing.assert_close(reduced(b), expected, rtol=0, atol=1e-12)
    assert reduced.num_parameters() == base.num_parameters() + 5 * 2 * (24 + 1) + 2 * (24 + 1)


def test_train_mode_dropout_changes_outputs_and_encode_restores_mode():
    model = GraphEncoder(tiny_config(dropout=0.3, attention_dropout=0.3, embedding_dropout=0.3), seed=0).train()
    b = _batch([snowthrower(), lamp()], model)
    torch.manual_seed(0)
    assert not torch.allclose(model(b), model(b))
    model.encode([lamp()], HashTokenizer())
    assert model.training
    model.eval()
    torch.testing.assert_close(model(b), model(b), rtol=0, atol=0)


def test_seeded_init_is_reproducible_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    a, b = GraphEncoder(tiny_config(), seed=3), GraphEncoder(tiny_config(), seed=3)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert "params=" in repr(a) and "moe=" in repr(a)


# --- config and sizes ------------------------------------------------------------


def test_config_checks():
    with pytest.raises(ValueError, match="divisible"):
        tiny_config(node_dim=15)
    with pytest.raises(ValueError, match="reduced_dim"):
        tiny_config(reduced_dim=24)
    with pytest.raises(ValueError, match="dropout"):
        tiny_config(dropout=1.0)
    with pytest.raises(ValueError, match="unknown key"):
        ModelConfig.from_dict({"width": 3})
    assert ModelConfig.paper().as_base().reduced_dim == 0 and ModelConfig.paper().out_dim == 150


def test_shipped_yaml_configs_are_the_presets():
    assert load_config(REPO_ROOT / "configs" / "small.yaml").model == ModelConfig.small()
    assert load_config(REPO_ROOT / "configs" / "paper.yaml").model == ModelConfig.paper()


def test_config_module_does_not_import_torch():
    code = "import sys, graphtx.config, graphtx.model.config; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT, timeout=120)


def test_paper_parameter_counts_on_the_meta_device():
    with torch.device("meta"):
        base = GraphEncoder(ModelConfig.paper().as_base()).num_parameters()
        reduced = GraphEncoder(ModelConfig.paper()).num_parameters()
    assert abs(base / PAPER_BASE - 1) < 0.05, base
    assert abs(reduced / PAPER_REDUCED - 1) < 0.05, reduced
    assert (base, reduced) == (157_812_481, 162_762_865)  # the numbers README / report state


@pytest.mark.slow
def test_paper_model_builds_and_runs_on_cpu():
    model = GraphEncoder(ModelConfig.paper(), seed=0).eval()
    assert model.num_parameters() == 162_762_865
    with torch.no_grad():
        v = model(collate([snowthrower(), lamp()], HashTokenizer(32_000), 32))
    assert v.shape == (2, 150)


def test_package_exports_resolve():
    import graphtx.model as gm

    assert all(getattr(gm, name) is not None for name in gm.__all__)
    with pytest.raises(AttributeError):
        gm.NotAThing  # noqa: B018
