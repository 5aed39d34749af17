from __future__ import annotations

import torch

from graphtx.graphs.graph import EDGE_TYPES, NODE_TYPES
from graphtx.model.batch import GraphBatch, collate
from tests.model import HashTokenizer, lamp, no_nodes, single_node, snowthrower


def test_collate_flattens_with_offsets_in_one_tokenizer_call():
    graphs = [snowthrower(), no_nodes(), lamp(), single_node()]
    tok = HashTokenizer()
    b = collate(graphs, tok, max_tokens_per_node=4)
    assert tok.calls == 1
    assert b.num_graphs == 4 and b.num_nodes == 8 + 0 + 5 + 1
    assert b.nodes_per_graph().tolist() == [8, 0, 5, 1]
    assert b.ptr().tolist() == [0, 8, 8, 13, 14]
    assert b.node_graph.tolist() == [0] * 8 + [2] * 5 + [3]
    assert b.node_type.tolist() == [NODE_TYPES.index(t) for g in graphs for t in g.node_type]

    # edges: each graph's own edges, shifted by its first node
    offsets = {0: 0, 2: 8}
    expected = [(s + offsets[i], d + offsets[i], EDGE_TYPES.index(t)) for i in (0, 2) for s, d, t in graphs[i].edges()]
    got = list(zip(b.edge_index[0].tolist(), b.edge_index[1].tolist(), b.edge_type.tolist()))
    assert got == expected
    assert all(
        t.dtype == torch.long for t in (b.token_ids, b.token_node, b.node_graph, b.node_type, b.edge_index, b.edge_type)
    )


def test_tokens_per_node_match_a_python_reference_and_are_truncated():
    graphs = [snowthrower(), lamp()]
    tok = HashTokenizer()
    b = collate(graphs, tok, max_tokens_per_node=3)
    texts = [t for g in graphs for t in g.node_text]
    ref = tok.encode_batch(texts)
    for node, ids in enumerate(ref):
        assert b.token_ids[b.token_node == node].tolist() == ids[:3]
    assert bool((b.token_node[1:] >= b.token_node[:-1]).all())
    empty_node = texts.index("")
    assert int((b.token_node == empty_node).sum()) == 0  # empty text → no token rows (pools to zeros)


def test_empty_batch_and_to_device():
    b = collate([], HashTokenizer(), max_tokens_per_node=4)
    assert b.num_graphs == 0 and b.num_nodes == 0 and b.edge_index.shape == (2, 0)
    b = collate([lamp()], HashTokenizer(), max_tokens_per_node=4)
    moved = b.to("cpu")
    assert isinstance(moved, GraphBatch) and moved.num_graphs == 1
    assert torch.equal(moved.edge_index, b.edge_index)
    assert "graphs=1" in repr(moved)
