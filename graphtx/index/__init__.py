"""Index stage: batch embedding into FAISS index directories; search, explanations, hybrid BM25.

``Index`` (search.py) is the Python API, returning ``results.py``'s hits; ``build_index`` /
``remove_documents`` (build.py) embed and commit documents, ``finalize.py`` writes the id map,
shards, BM25 and manifest; ``store.py`` names and reads back the files of an index directory
(``idmap.py``: the live id map); ``search_claim_set`` (claimset.py) searches the first or every
independent claim of a claim set; ``run_topics`` (batch.py) runs a topics file into a TREC run file.
"""

from graphtx.index.batch import BatchReport, read_topics, run_topics
from graphtx.index.build import BuildReport, build_index, remove_documents
from graphtx.index.claimset import ClaimSetResult, search_claim_set
from graphtx.index.filters import SearchFilters
from graphtx.index.results import Hit, SearchResult
from graphtx.index.search import Index

__all__ = [
    "BatchReport", "BuildReport", "ClaimSetResult", "Hit", "Index", "SearchFilters", "SearchResult", "build_index",
    "read_topics", "remove_documents", "run_topics", "search_claim_set",
]  # fmt: skip
