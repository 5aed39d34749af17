from __future__ import annotations

import pytest
import torch

from tests.index.fixtures import make_corpus, make_graphs, make_model

N_DOCS = 120


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Tiny tensors: intra-op threads only add overhead on a shared 2-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A corpus, graphs directory and model for N_DOCS documents (no spaCy)."""
    root = tmp_path_factory.mktemp("tiny")
    corpus = make_corpus(root, range(N_DOCS))
    return {"root": root, "corpus": corpus, "graphs": make_graphs(root, range(N_DOCS), corpus=corpus), "model": make_model(root)}


@pytest.fixture(scope="session")
def tiny_index(tiny, tmp_path_factory):
    """A flat index over the tiny graphs, small chunks (several parts)."""
    from graphtx.config import IndexConfig
    from graphtx.index.build import build_index

    out = tmp_path_factory.mktemp("tiny_index") / "index"
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=32), progress=False)
    return out
