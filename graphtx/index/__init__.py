"""Index stage: batch embedding into FAISS index directories; search, explanations, hybrid BM25.

``Index`` (search.py) is the Python API; ``build_index`` / ``remove_documents`` (build.py)
write index directories (layout in store.py).
"""

from graphtx.index.build import BuildReport, build_index, remove_documents
from graphtx.index.filters import SearchFilters
from graphtx.index.search import Hit, Index, SearchResult

__all__ = ["BuildReport", "Hit", "Index", "SearchFilters", "SearchResult", "build_index", "remove_documents"]
