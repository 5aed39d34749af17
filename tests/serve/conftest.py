"""The service tests use the index tests' tiny corpus, model and index."""

from tests.index.conftest import _one_torch_thread, tiny, tiny_index  # noqa: F401  (pytest fixtures)
