"""benchmarks/resketch_vectors.py: the lexical part sketched again, at another size or from the heaviest tokens only."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from graphtx.model.lexical import LexicalChannel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
resketch_vectors = pytest.importorskip("resketch_vectors")


class Batch:
    """The three tensors of a collated batch the lexical channel reads: two graphs, three nodes."""

    token_ids = torch.tensor([2, 3, 3, 4, 5, 2, 6])  # (t,)
    token_node = torch.tensor([0, 0, 1, 1, 1, 2, 2])  # (t,) graph 0 = nodes 0-1, graph 1 = node 2
    node_graph = torch.tensor([0, 0, 1])  # (n,)


def _channel(dim: int) -> LexicalChannel:
    channel = LexicalChannel(vocab_size=8, dim=dim)
    channel.load_token_idf(np.array([1.0, 1.0, 0.5, 2.0, 1.5, 3.0, 0.7, 1.0]))
    return channel


def test_without_a_token_limit_the_sketch_is_the_encoders_own():
    channel = _channel(16)
    expected = channel(Batch.token_ids, Batch.token_node, Batch.node_graph, 2)
    torch.testing.assert_close(resketch_vectors.sketch(channel, Batch, 2), expected)
    torch.testing.assert_close(resketch_vectors.sketch(channel, Batch, 2, top_tokens=10), expected)  # more than any graph holds


def test_the_top_tokens_keep_each_graphs_heaviest():
    channel = _channel(16)
    one = resketch_vectors.sketch(channel, Batch, 2, top_tokens=1)  # graph 0: token 3 (tf 2, idf 2); graph 1: token 2 (idf 0.5) < 6 (0.7)
    for graph, token in ((0, 3), (1, 6)):
        expected = torch.zeros(16)
        expected[channel.bucket[token]] = channel.sign[token]
        torch.testing.assert_close(one[graph], expected)
    two = resketch_vectors.sketch(channel, Batch, 2, top_tokens=2)  # graph 0: tokens 3 and 5 (idf 3), token 4 (idf 1.5) and 2 left out
    weights = {3: (1 + np.log(2)) * 2.0, 5: 3.0}
    expected = torch.zeros(16)
    for token, w in weights.items():
        expected[channel.bucket[token]] += w * channel.sign[token]
    torch.testing.assert_close(two[0], expected / expected.norm())


def test_bad_sizes_are_refused(capsys):
    with pytest.raises(SystemExit):
        resketch_vectors.main(["v.parquet", "m", "g", "--dim", "0", "--out", "o.parquet"])
    assert "--dim must be >= 1" in capsys.readouterr().err
