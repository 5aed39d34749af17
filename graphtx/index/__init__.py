"""Index stage: batch embedding into FAISS index directories; search, explanations, hybrid BM25.

``Index`` (search.py) is the Python API, returning ``results.py``'s hits; ``build_index`` /
``remove_documents`` (build.py) embed and commit documents, ``finalize.py`` writes the id map,
shards, BM25 and manifest (``sharded.py``: shards filled as Ray tasks, IVF-PQ merged on disk); ``store.py`` names and reads back the files of an index directory
(``idmap.py``: the live id map); ``search_claim_set`` (claimset.py) searches the first or every
independent claim of a claim set; ``run_topics`` (batch.py) runs a topics file into a TREC run file.
``IndexConfig`` / ``SearchConfig`` are in config.py; what ``graphtx index`` / ``search`` print in report.py.

Names are imported lazily so that ``graphtx.config`` can import ``graphtx.index.config``
without importing FAISS and torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_EXPORTS = {
    "BatchReport": "batch",
    "read_topics": "batch",
    "run_topics": "batch",
    "BuildReport": "build",
    "build_index": "build",
    "remove_documents": "build",
    "ClaimSetResult": "claimset",
    "search_claim_set": "claimset",
    "SearchFilters": "filters",
    "Hit": "results",
    "SearchResult": "results",
    "Index": "search",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from graphtx.index.batch import BatchReport, read_topics, run_topics
    from graphtx.index.build import BuildReport, build_index, remove_documents
    from graphtx.index.claimset import ClaimSetResult, search_claim_set
    from graphtx.index.filters import SearchFilters
    from graphtx.index.results import Hit, SearchResult
    from graphtx.index.search import Index


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'graphtx.index' has no attribute {name!r}")
    return getattr(importlib.import_module(f"graphtx.index.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return __all__
