"""torch's CPU threads for a stretch of work, restored after it (on success or failure).

torch's intra-op thread count is process-wide, so the stretch must not run beside another that sets it (two in threads
side by side would restore each other's count out of order): the phrase fine-tune and the trainers run one at a time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """``torch.set_num_threads(n)`` inside the block, the previous count after it."""
    import torch  # here: infrastructure below the stages loads torch only when a stage asks

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
