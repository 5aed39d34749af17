from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """The model tests use tensors of a few dozen rows: intra-op threads only add overhead
    (100x slower on a busy 2-core machine, where OpenMP threads wait for each other)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
