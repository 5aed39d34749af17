"""Prior-art search over an index directory: the Python API behind ``graphtx search`` and the service.

Example::

    from graphtx.index import Index, SearchFilters

    index = Index.open("runs/demo/index")                      # the model copied into the index
    for hit in index.search("1. A snowthrower comprising ...", k=10):
        print(hit.rank, hit.doc_id, round(hit.score, 3), hit.title)
    index.search(doc_id="US-7315346-B2", k=5)                  # more like an indexed document (itself left out)
    index.search(doc_id="US7315346B2", filters=SearchFilters())  # as a searcher would: its family left out, only
                                                               # documents published before its priority date
    index.search(text, k=10, filters=SearchFilters(before="2010-01-01", cpc=("E01H",), group_by_family=True))
    index.search(text, k=10, hybrid=True)                      # dense + BM25, fused by RRF
    index.search(text, k=10, rerank="late", rerank_depth=100)  # the top 100 re-ranked by late interaction
    index.late_scores(index.query(text), ["US-1", "US-2"])     # node-level late-interaction scores
    result = index.search(text, k=3, explain=True)             # hit.explanation: node matches, claim chart (not_found);
                                                               # hit.ranker_explanation: each signal's part of the score
    index.search(text, k=10, offset=10)                        # the second page: ranks 11-20
    hit.abstract, hit.first_claim, hit.applicants, hit.link     # readable fields ("" / () where the corpus has none)
    index.document("US-7315346-B2")                            # metadata and graph

A text query is parsed into a first-claim graph (``query.py``), encoded by the index's model
and searched in every shard; hits are ranked by score (cosine), ties by document id. Filters
(``filters.py``) restrict the candidates of every ranker; where a ranker reads a fixed number of
FAISS neighbours it reads more until k documents pass (doubling, up to the whole index). Typed
ids are normalised (``US8418590B2`` finds ``US-8418590-B2``; a miss names the closest ids). The
query model must be the model the index was built with (same fingerprint), or ``open``
refuses it. ``Index`` is the facade of the Python API: it opens the directory (``opening.py``) and runs a search (query, filters,
re-ranking, paging) over its parts, each with one job: ``query.py`` (claim text -> claims -> a graph, once),
``rankers.py`` (the first stage every registered ranker of ``graphtx.rank`` runs through: FAISS, BM25, their pool;
``Index``'s base class), ``reader.py`` (the documents read back), ``charts.py`` (claim charts and their calibrated
"found" rule), ``late_rerank.py`` (late interaction); what a search returns (``Hit``, ``SearchResult``,
``DocumentRecord``) is in ``results.py``; the files of the index directory are read through ``store.py``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

import numpy as np

from graphtx.from_dict import known_only
from graphtx.graphs.config import ParseConfig
from graphtx.graphs.graph import InventionGraph
from graphtx.index.charts import ClaimCharts
from graphtx.index.config import SearchConfig
from graphtx.index.explain import Explanation
from graphtx.index.faiss_index import IndexSpec
from graphtx.index.filters import FilterData, Filtering, SearchFilters
from graphtx.index.hybrid import BM25Index, IndexBm25
from graphtx.index.idmap import IdMap
from graphtx.index.late_rerank import LateInteraction
from graphtx.index.opening import open_index_files
from graphtx.index.query import Query, QueryParser
from graphtx.index.rankers import FirstStage, elapsed_ms
from graphtx.index.reader import DocumentReader
from graphtx.index.results import DocumentRecord, SearchResult
from graphtx.index.store import (
    GRAPH_FIELDS,
    IndexStore,
    row_to_graph,
)

log = logging.getLogger(__name__)

# --- the index -------------------------------------------------------------------------


class Index:
    """A searchable index directory: FAISS shards, id map, documents, model and (lazily) BM25."""

    def __init__(
        self,
        store: IndexStore,
        manifest: dict,
        model,
        tokenizer,
        ids: IdMap,
        shards: list,
        spec: IndexSpec,
        search: SearchConfig,
        on_gpu: bool,
        ranker=None,
        model_profile=None,
    ):
        self.store, self.manifest = store, manifest
        self.model, self.tokenizer = model, tokenizer
        self.ids, self.shards, self.spec = ids, shards, spec
        self.config = search
        self.on_gpu = on_gpu
        self.parser = QueryParser(
            known_only(ParseConfig, manifest.get("parse_config")), search.query_kind
        )  # the index's parse settings
        self.bm25_state = IndexBm25(store, ids, manifest)
        # the parts an open index is made of: the documents read back, the claim charts, late interaction
        self.reader = DocumentReader(store, ids, manifest["kind"], search.link_template)
        self.filtering = Filtering(self.reader, manifest["live_digest"])
        self.charts = ClaimCharts(
            self.reader, model, tokenizer, search, manifest.get("model_fingerprint", ""), self.bm25_state.at_hand
        )
        self.late_interaction = LateInteraction(
            self.reader, model, tokenizer, bool(manifest.get("late")), search.explain_rows
        )
        self.first_stage = FirstStage(
            self.reader,
            shards,
            spec,
            on_gpu,
            search,
            int(manifest["dim"]),
            manifest["live_digest"],
            self.bm25,
            ranker,
            model_profile,
        )

    # the fitted ranker of `graphtx rank-fit` (None without one) and the late-scorer hook live in the first stage
    @property
    def ranker(self):
        return self.first_stage.ranker

    @ranker.setter
    def ranker(self, value) -> None:
        self.first_stage.ranker = value

    @property
    def late_scorer(self):
        """HOOK: late(query: Query, positions (n,)) -> (n,) late-interaction scores for the rankers' "late" features."""
        return self.first_stage.late_scorer

    @late_scorer.setter
    def late_scorer(self, value) -> None:
        self.first_stage.late_scorer = value

    def resolve_ranker(self, ranker: str | None = None, hybrid: bool | None = None) -> str:
        """The ranker a search uses: ``ranker``, else hybrid when asked, else ``search.ranker`` (auto: learned when fitted,
        learned-lexical when it was fitted on another field (search.same_field), else hybrid unless ``search.hybrid`` is false)."""
        return self.first_stage.resolve_ranker(ranker, hybrid)

    def available_rankers(self) -> list[str]:
        """The registered rankers this index can search with."""
        return self.first_stage.available_rankers()

    def ranker_warnings(self, kind: str) -> list[str]:
        """What to know about ranking with ``kind`` (a resolved ranker) here: a learned ranker fitted on another field."""
        return self.first_stage.ranker_warnings(kind)

    def field_check(self):
        """The index's documents against the corpus its fitted ranker was fitted on and the one its model learned on
        (graphtx.text.field.IndexField), or None without a fitted ranker's profile."""
        return self.first_stage.field_check()

    # --- opening ---------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        directory: str | Path,
        *,
        model=None,
        search: SearchConfig = SearchConfig(),
        mmap: bool = True,
        use_gpu: str = "auto",
        nprobe: int | None = None,
        ef_search: int | None = None,
        device: str = "cpu",
        ranker_dir: str | Path | None = None,
    ) -> Index:
        """Open ``directory`` for searching.

        ``ranker_dir``: the ranker of ``graphtx rank-fit`` (default: ``INDEX/ranker``, else the model
        directory's ``ranker/``); refused when it was fitted on another model.

        ``model``: None (the model the manifest names, normally the copy in the index), a model
        directory, or a ``(GraphEncoder, tokenizer)`` pair. Its fingerprint must equal the
        manifest's. ``nprobe`` / ``ef_search`` override the IVF-PQ / HNSW search parameters.
        """
        opened = open_index_files(directory, model, mmap, use_gpu, nprobe, ef_search, device, ranker_dir)
        return cls(
            opened.store,
            opened.manifest,
            opened.encoder,
            opened.tokenizer,
            opened.ids,
            opened.shards,
            opened.spec,
            search,
            opened.on_gpu,
            opened.ranker,
            opened.model_profile,
        )

    # --- properties ----------------------------------------------------------------------
    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.manifest["dim"])

    @property
    def fingerprint(self) -> str:
        return self.manifest["model_fingerprint"]

    def __len__(self) -> int:
        return self.count

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self.ids

    def __repr__(self) -> str:
        return f"Index({str(self.store.dir)!r}, count={self.count}, dim={self.dim}, type={self.spec.index_type}, shards={len(self.shards)}, kind={self.manifest['kind']})"

    # --- queries -------------------------------------------------------------------------
    def embed(self, graphs: list[InventionGraph]) -> np.ndarray:
        """Graph vectors (b, dim) float32 with the index's model."""
        import torch

        return self.model.encode(graphs, self.tokenizer).to(torch.float32).numpy()

    def query(
        self,
        text: str | None = None,
        *,
        doc_id: str | None = None,
        graph: InventionGraph | None = None,
        timings: dict | None = None,
    ) -> Query:
        """A query from exactly one of: claim text, an indexed document's id, or a graph."""
        given = [name for name, v in (("text", text), ("doc_id", doc_id), ("graph", graph)) if v is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of text, doc_id or graph (got {', '.join(given) or 'none'})")
        timings = timings if timings is not None else {}
        if doc_id is not None:
            doc_id = self.ids.resolve(doc_id)  # "US8418590B2" -> "US-8418590-B2"; a miss names the closest ids
            pos = self.ids.position_of(doc_id)
            row = self._rows([pos], ["vector", "text", *GRAPH_FIELDS])[0]
            vector = np.asarray(row["vector"], np.float32)
            return Query(
                "id",
                row_to_graph(row, doc_id, self.manifest["kind"]),
                vector,
                row["text"] or "",
                frozenset([doc_id]),
                doc_id,
            )
        if text is not None:
            t0 = time.perf_counter()
            claim, graph = self.parser.claim_graph(text)
            timings["parse"] = elapsed_ms(t0)
            source = "text"
        else:
            claim = "\n".join(graph.node_text)
            source = "graph"
        t0 = time.perf_counter()
        vector = self.embed([graph])[0]
        timings["encode"] = elapsed_ms(t0)
        return Query(source, graph, vector, claim)

    def search(
        self,
        text: str | None = None,
        k: int | None = None,
        *,
        doc_id: str | None = None,
        graph: InventionGraph | None = None,
        hybrid: bool | None = None,
        explain: bool = False,
        exclude: set[str] | frozenset[str] = frozenset(),
        ranker: str | None = None,
        rerank: str | None = None,
        rerank_depth: int | None = None,
        filters: SearchFilters | None = None,
        offset: int = 0,
    ) -> SearchResult:
        """Ranked hits for claim text, an indexed document (``doc_id``) or a graph.

        ``ranker``: dense | bm25 | hybrid | convex | learned | learned-lexical (default: ``search.ranker``; ``auto`` =
        learned when the index has a ranker (learned-lexical when it was fitted on another field: graphtx.text.field),
        else hybrid with ``hybrid``/``search.hybrid``, else dense).
        ``rerank="late"``: that first stage ranks ``rerank_depth`` (at least k) candidates, which are
        re-ranked by the late-interaction score (ties: first-stage order).
        ``filters``: :class:`SearchFilters` (``SearchFilters()`` = the searcher's defaults: for an id
        query, its family left out and only documents published before its priority date); None
        filters nothing. Fewer than k hits come back only when fewer documents pass.
        ``offset``: skip the best ``offset`` hits (a results page); ranks stay those of the whole ranking.
        ``explain``: each hit's node matches and claim chart (``hit.explanation``) and, under hybrid, convex
        and learned, what each signal contributed to the ranker's score (``hit.ranker_explanation``).
        """
        t_start = time.perf_counter()
        k = self.config.k if k is None else k
        if k < 1:
            raise ValueError(f"k must be at least 1 (got {k})")
        if offset < 0:
            raise ValueError(f"offset must be at least 0 (got {offset})")
        page_end = k + offset
        k = page_end
        kind = self.resolve_ranker(ranker, hybrid)
        rerank = self.config.rerank if rerank is None else rerank
        if rerank not in ("none", "late"):
            raise ValueError(f"rerank must be none or late, got {rerank!r}")
        depth = max(k, self.config.rerank_depth if rerank_depth is None else rerank_depth) if rerank == "late" else k
        if rerank == "late":
            self.late_interaction.require()
        timings: dict = {}
        q = self.query(text, doc_id=doc_id, graph=graph, timings=timings)
        excluded = q.exclude | frozenset(exclude)
        mask, applied = self._mask(q, filters, timings)
        group = filters is not None and filters.group_by_family
        while True:
            hits = self.first_stage.run(q, kind, depth, excluded, mask, timings, explain=explain and rerank != "late")
            if rerank == "late":
                hits = self.late_interaction.rerank(q, hits, len(hits) if group else k, timings)
            if not group:
                break
            grouped = self.filtering.one_per_family(hits)
            if len(grouped) >= k or len(hits) < depth or depth >= self.count:  # enough families, or no more candidates
                hits = grouped
                break
            depth = min(self.count, depth * 2)
        if len(hits) > k or group:
            hits = [dataclasses.replace(h, rank=r) for r, h in enumerate(hits[:k], 1)]
        hits = hits[offset:page_end]  # k is page_end here: the ranks of a page are those of the whole ranking
        if explain:
            hits = (
                self.late_interaction.chart_hits(q, hits, timings)
                if rerank == "late"
                else self.charts.chart_hits(q, hits, timings)
            )
        timings["total"] = elapsed_ms(t_start)
        return SearchResult(
            q,
            tuple(hits),
            kind != "dense",
            timings,
            kind,
            rerank,
            applied,
            tuple(self.query_warnings(q)) + tuple(self.first_stage.ranker_warnings(kind)),
        )

    # --- filters (filters.py) ------------------------------------------------------------------
    def filter_data(self) -> FilterData:
        """Dates, classes, offices, kinds and families of the live documents (read once per index version)."""
        return self.filtering.data()

    def _mask(self, q: Query, filters: SearchFilters | None, timings: dict) -> tuple[np.ndarray | None, dict]:
        """(count,) bool of documents that may be hits (None: all), and the filters in force for the result."""
        t0 = time.perf_counter()
        mask, applied = self.filtering.mask(q.doc_id, filters)
        if filters is not None:
            timings["filter"] = elapsed_ms(t0)
        return mask, applied

    # --- late interaction (late_rerank.py) ---------------------------------------------------
    @property
    def has_late(self) -> bool:
        """Whether this index can re-rank by late interaction (a late head in the model, node vectors stored)."""
        return self.late_interaction.available

    def query_nodes(self, q: Query) -> tuple[np.ndarray, np.ndarray]:
        """The query graph's late-interaction node vectors (m, L) and weights (m,)."""
        return self.late_interaction.query_nodes(q)

    def late_scores(self, query: Query | str, doc_ids: list[str]) -> np.ndarray:
        """(len(doc_ids),) float64: the late-interaction score of ``query`` (a Query or claim text) and each indexed document."""
        self.late_interaction.require()
        return self.late_interaction.scores(self.query(query) if isinstance(query, str) else query, doc_ids)

    # --- claim charts (charts.py) ---------------------------------------------------------------
    def found_rule(self):
        """The claim chart's rule for "found by the model" (graphtx/index/calibration.py): ``search.found_similarity`` when set,
        else the threshold calibrated on a seeded sample of this index's documents (in memory, once per open index)."""
        return self.charts.found_rule()

    def knows_words(self, text: str) -> bool | None:
        """Whether ``text`` holds a word (after BM25's stemming and stop words) some indexed document holds; None when no BM25
        state is at hand (loaded, or persisted and current): a dense-only search never builds BM25 for this."""
        return self.charts.knows_words(text)

    def query_warnings(self, q: Query) -> list[str]:
        """What a searcher should know before trusting a claim chart: a query with almost no features, or no word the index knows."""
        return self.charts.query_warnings(q)

    def explain(
        self,
        doc_ids: list[str],
        text: str | None = None,
        *,
        doc_id: str | None = None,
        graph: InventionGraph | None = None,
    ) -> list[Explanation]:
        """Node matches between a query and the given indexed documents (any, not only hits)."""
        q = self.query(text, doc_id=doc_id, graph=graph)
        return self.charts.explain(q, [self.ids.resolve(d) for d in doc_ids])

    def document(self, doc_id: str) -> DocumentRecord:
        """The whole indexed document: metadata, every claim, the description, its graph, and the indexed documents it cites and
        that cite it (from the corpus's citations, as the index was built with its corpus)."""
        return self.reader.document(self.ids.resolve(doc_id))  # typed forms ("US8418590B2") find the indexed id

    # --- BM25 state (hybrid.py) ----------------------------------------------------------------
    def bm25(self) -> BM25Index:
        """The BM25 index of the documents: loaded from ``bm25/`` when current, else built in memory (never written here)."""
        return self.bm25_state.get()

    def _rows(self, positions: list[int], columns: list[str]) -> list[dict]:
        return self.reader.rows(positions, columns)
