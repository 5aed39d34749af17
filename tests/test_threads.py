"""torch_threads sets torch's CPU thread count for a block and puts the previous one back, also when the block fails."""

from __future__ import annotations

import pytest
import torch

from graphtx.threads import torch_threads


def test_the_count_holds_inside_and_comes_back_after_success_and_failure():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError), torch_threads(1):
        raise ValueError("the block failed")
    assert torch.get_num_threads() == before
