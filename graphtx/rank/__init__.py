"""Re-ranking a candidate pool of BM25 and dense hits: convex combination and a learned ranker.

==================  =============================================================================
``features``        the candidate pool of one query (union of the top N of BM25 and of the dense model) and
                    its per (query, candidate) features — ONE function (:func:`pool_features`) used when a
                    ranker is fitted and when it ranks a query, so both see identical numbers
``convex``          score = a * norm(BM25) + (1 - a) * norm(dense), a fitted on training citations
``learned``         LightGBM lambdarank over the features, grouped cross-validation by query
``pool``            what a ranker is handed (one query's candidate pool) and the interface it implements
``registry``        the rankers by name (built-in ones under ``rankers/``, one a module; plug-ins registered)
``store``           the ranker directory (``ranker.json`` + LightGBM text models), its fingerprint
==================  =============================================================================

This stage sits between the model and the index: it imports numpy (and lightgbm / scipy when
used) only, so ``graphtx.index`` (search, service) and ``graphtx.eval`` (fitting, tables) share it.
"""
