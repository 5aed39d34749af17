"""Evaluation protocols and baselines (``graphtx eval ...``).

==================  ==================================================================================
``config``          ``EvalConfig`` (the ``eval:`` section)
``data``            corpus documents and citation judgements (gain per category, what is not scored)
``ranking``         score rows -> rankings: score desc, ties by id, the query left out
``systems``         what is evaluated: graphtx vectors / model + graphs / index (hook)
``baselines``       BM25 (bm25s), TF-IDF cosine, FastText average, all-MiniLM-L6-v2, all-mpnet-base-v2
``protocols``       citation retrieval (paper + SciBERT-triplet metrics) and PaECTER's samples
``run``             one run: a corpus, its citations, every system, every protocol; BM25 tuning
``report``          tables with ratios to BM25, JSON, per-query CSV, metric-vs-k plots
``command``         ``graphtx eval citations`` / ``graphtx eval paecter``
``phrases/``        phrase similarity (``graphtx eval phrases``), in the same layers: config, data, model, ...
==================  ==================================================================================

Ranking metrics are pure functions in :mod:`graphtx.metrics` (shared with training). Importing
this package is cheap: submodules load what they need (torch, bm25s) when they are imported.
"""

PROTOCOLS = ("retrieval", "paecter")  # citation protocols of `graphtx eval citations`
BASELINES = ("bm25", "tfidf", "fasttext-avg", "minilm", "mpnet")  # text baselines by CLI name
