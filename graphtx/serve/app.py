"""HTTP service over one index directory (FastAPI).

Endpoints (JSON in, JSON out)::

    POST   /search           {"text": "1. A snowthrower ...", "k": 10, "ranker": "learned", "explain": false}
                             or {"id": "US-7315346-B2", ...}: ranked hits with metadata (and node matches);
                             filters: "before": "2010-06-30" (an id query: its priority date unless
                             given; "none": off), "cpc"/"ipc": ["H01M"], "country": ["US"], "kind": ["B"],
                             "exclude_family" (an id query: true), "group_by_family"
    POST   /explain          {"text" | "id", "doc_ids": [...]}: node matches for those documents;
                             without doc_ids, for the top k hits (k <= serve.max_explain_hits)
    POST   /search/batch     {"topics": [{"id": "Q1", "text": ...}, {"id": "US-1-B2"}], "k": 100, ...}: per topic its hits
                             or why it was skipped, and the TREC run lines (at most serve.max_batch_topics topics)
    GET    /documents/{id}   metadata and graph of an indexed document (?graph=false: metadata only)
    GET    /healthz          status, document count, model fingerprint, index type
    DELETE /documents/{id}   only when serve.read_only is false: takes the document out of the index

    GET    /                 the search page (graphtx/serve/static/): claim text or an id, filters, hits
                             with matched features and both graphs as SVG, pages, a document page at
                             /view/{id}; every asset is served from the package (no CDN)
    GET    /docs             the OpenAPI page (Swagger UI from the swagger-ui-bundle-v2 package, offline)

``/search`` takes ``offset`` (a results page: hits offset+1 .. offset+k) and, with ``explain``,
``svg`` (each hit's query and hit graphs drawn, matched nodes shaded); ``/documents/{id}?svg=true``
adds the document's graph drawn.

Limits (``ServeConfig``, enforced in ``limits.py`` and ``server.py``): bodies over
``max_request_bytes`` get 413 before they are read whole; a head or body slower than
``read_timeout_s`` 408; more than ``max_pending`` requests at once 503; a Host header not
in the allow-list 400; texts over ``max_text_chars`` 413; k over ``max_k`` 400. Bad input is a
4xx with ``{"error": message}``: 400 (no features in the text, both or neither of text and
id), 404 (unknown document; ``suggestions`` lists the closest ids), 413 (too large), 422
(malformed JSON or wrong field types). Ids are normalised (``US8418590B2`` finds ``US-8418590-B2``).

Query handlers are plain functions, run in a pool of ``serve.workers`` threads; the index is
safe to share between threads (spaCy parsing and BM25 loading are serialised inside it).
``/healthz`` is a coroutine answered on the event loop, so it answers while every worker is
busy. The service never writes into the index it serves (BM25 state missing there is built
in memory), unless started writable, where DELETE goes through the index's own writer.

Example::

    app = create_app(Index.open("runs/demo/index"))
    serve("runs/demo/index", ServeConfig(port=8000))
"""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool

from graphtx.index.claimset import search_claim_set
from graphtx.index.config import SearchConfig
from graphtx.index.filters import SearchFilters
from graphtx.index.idmap import DocumentNotFound
from graphtx.index.search import Index
from graphtx.serve.config import ServeConfig
from graphtx.serve.limits import Admission, BodyGuard, HostAllowList
from graphtx.serve.pages import add_pages
from graphtx.serve.svg import graph_svg, hit_svgs

# --- request bodies ------------------------------------------------------------------
# a JSON body's types are the schema's (JSON Schema's): 0 is not false and "3" is not 3, but 3.0 is the integer 3,
# so a client generated from the OpenAPI schema and one written by hand get the same answers (issue 50:
# "all_independent": 0 was taken as false)


def _json_integer(value):
    """An integer as JSON Schema reads one: a number without a fraction; not a string, not true or false."""
    if isinstance(value, (str, bool)):
        raise ValueError("Input should be a valid integer")
    return value


# one token of a TREC run line (no white space as Python's str.split sees it), written out so that the service
# (pydantic's regex engine), the schema's readers (ECMA regexes) and Python agree on every character
_WHITE = "\\t\\n\\u000b\\f\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
ONE_TOKEN = f"^[^{_WHITE}]+$"
Flag = StrictBool
Count = Annotated[int, BeforeValidator(_json_integer)]


def _registered_ranker(name: str) -> str:
    """A ranker of the registry (graphtx.rank.registry), read when the request comes: a plug-in registered
    before the service started is as valid as a built-in one; the schema's enum lists those of this index."""
    from graphtx.rank.registry import get_ranker

    return get_ranker(name).name


RankerName = Annotated[str, AfterValidator(_registered_ranker)]


class ErrorOut(BaseModel):
    """Every error answer of the service: what went wrong in words (and, for an unknown document, close ids)."""

    error: str
    suggestions: list[str] | None = Field(None, description="an unknown document id: indexed ids spelled like it")


_ANSWERS = {
    400: "a request the service cannot run: a malformed JSON body, text and id both or neither, k or offset over the service's limit, a bad date",
    404: "a document id the index does not hold (with suggestions)",
    408: "the body did not arrive within serve.read_timeout_s",
    413: "a body over serve.max_request_bytes, a text over serve.max_text_chars, too many topics",
    422: "a field of the wrong type or out of its range, or an unknown field",
    503: "serve.max_pending requests already running or queued: retry after the Retry-After seconds",
}


def error_answers(*codes: int) -> dict:
    """The OpenAPI ``responses`` of an endpoint: its error answers, each an :class:`ErrorOut`."""
    return {code: {"model": ErrorOut, "description": _ANSWERS[code]} for code in codes}


BODY_ERRORS = error_answers(
    400, 404, 408, 413, 422, 503
)  # an endpoint with a JSON body (an id query may name an unknown document)


class QueryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str | None = Field(
        None,
        description='claim text; of a claim set the first independent claim is searched, the others named in "note"',
    )
    id: str | None = Field(None, description="an indexed document's id: search for documents like it")


class FiltersIn(BaseModel):
    before: str | None = Field(
        None,
        description="publication date strictly before (2010-06-30); an id query: its priority date unless given; none: off",
    )
    cpc: list[str] | None = Field(None, description="CPC prefixes, any may match (H01M, H01M 10/44)")
    ipc: list[str] | None = Field(None, description="IPC prefixes, any may match")
    country: list[str] | None = Field(None, description="publishing offices (US, EP, WO, ...)")
    kind: list[str] | None = Field(None, description="kind-code prefixes (B = B1 and B2)")
    exclude_family: Flag | None = Field(
        None, description="leave out the query's family and itself (default: true for an id query)"
    )
    group_by_family: Flag = Field(False, description="one hit per family, its best-scored member")

    def filters(self) -> SearchFilters:
        return SearchFilters.from_json({name: getattr(self, name) for name in FiltersIn.model_fields})


class SearchIn(QueryIn, FiltersIn):
    k: Count = Field(10, ge=1, description="hits (at most serve.max_k)")
    hybrid: Flag = Field(False, description="fuse with BM25 by reciprocal rank fusion (= ranker hybrid)")
    ranker: RankerName | None = Field(None, description="default: the service's (learned when the index has a ranker)")
    explain: Flag = Field(False, description="node matches for each hit (k at most serve.max_explain_hits)")
    rerank: Literal["none", "late"] | None = Field(
        None,
        description="late: re-rank the first stage's top rerank_depth by node-level late interaction (default: search.rerank)",
    )
    rerank_depth: Count | None = Field(
        None, ge=1, le=1000, description="first-stage candidates re-ranked (default: search.rerank_depth)"
    )
    offset: Count = Field(
        0,
        ge=0,
        description="hits skipped: a results page shows hits offset+1 .. offset+k (offset at most serve.max_offset)",
    )
    svg: Flag = Field(False, description="with explain: each hit's query and hit graphs as SVG, matched nodes shaded")
    all_independent: Flag = Field(
        False,
        description="a claim set: search every independent claim and merge the hits per document (each hit's found_by)",
    )
    merge: Literal["rrf", "max"] = Field(
        "rrf", description="with all_independent: rrf = reciprocal rank fusion of the claims' ranks, max = best score"
    )


class ExplainIn(QueryIn, FiltersIn):
    doc_ids: list[str] | None = Field(None, description="documents to explain; default: the top k hits")
    k: Count = Field(3, ge=1)
    offset: Count = Field(
        0, ge=0, description="without doc_ids: explain hits offset+1 .. offset+k (a results page, as /search pages)"
    )
    svg: Flag = Field(False, description="each explanation's query and hit graphs as SVG, matched nodes shaded")
    hybrid: Flag = False
    rerank: Literal["none", "late"] | None = None
    rerank_depth: Count | None = Field(None, ge=1, le=1000)
    ranker: RankerName | None = None


class TopicIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(
        ...,
        min_length=1,
        pattern=ONE_TOKEN,
        description="topic id (the run's qid, no white space); alone: an indexed document's id as the query",
    )
    text: str | None = Field(None, description="claim text or a claim set")
    doc_id: str | None = Field(None, description="an indexed document as the query")


class BatchIn(FiltersIn):  # the filters apply to every topic (an id topic: its own priority date by default)
    model_config = ConfigDict(extra="forbid")
    topics: list[TopicIn] = Field(..., min_length=1, description="at most serve.max_batch_topics")
    k: Count = Field(10, ge=1, description="hits per topic (at most serve.max_k)")
    hybrid: Flag = False
    ranker: RankerName | None = None
    rerank: Literal["none", "late"] | None = None
    rerank_depth: Count | None = Field(None, ge=1, le=1000)
    all_independent: Flag = Field(
        False, description="search every independent claim of a claim set, merged per document"
    )
    merge: Literal["rrf", "max"] = "rrf"
    tag: str | None = Field(None, pattern=ONE_TOKEN, description="the run's tag (default graphtx-RANKER)")


def _claims_note(text: str | None) -> dict:
    """{"claims", "note"} when a query text holds several independent claims (only the first is searched), else {}."""
    from graphtx.index.query import independent_claims

    claims = independent_claims(text) if text else ()
    if len(claims) <= 1:
        return {}
    others = [c.num for c in claims[1:]]
    note = (
        f"the query has {len(claims)} independent claims; only claim {claims[0].num} was searched, not claim(s) {', '.join(map(str, others))} "
        '("all_independent": true searches every independent claim and merges the hits per document)'
    )
    return {"claims": {"searched": [claims[0].num], "not_searched": others, "merge": "single"}, "note": note}


def _in_words(error: dict) -> str:
    """One request-validation error as a user reads it: "k must be at least 1", not "body.k: Input should be ..."."""
    where = [str(x) for x in error.get("loc", ()) if x != "body"]
    name, kind, ctx = ".".join(where) or "body", error.get("type", ""), error.get("ctx") or {}
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = next(iter(ctx.values()), "")
        words = {
            "greater_than_equal": "at least",
            "greater_than": "more than",
            "less_than_equal": "at most",
            "less_than": "less than",
        }[kind]
        return f"{name} must be {words} {bound}"
    if kind == "extra_forbidden":
        return f"unknown field {name!r}"
    return f"{name}: {error.get('msg')}"


def create_app(index: Index | str | Path, cfg: ServeConfig = ServeConfig(), search: SearchConfig | None = None):
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    if not isinstance(index, Index):
        index = Index.open(index, search=search or SearchConfig())
    index.field_check()  # now, not in /healthz on the event loop: it may load the BM25 (graphtx.text.field)
    holder = {"index": index}  # swapped whole after a DELETE; requests in flight keep the old one
    write_lock = threading.Lock()

    class Problem(Exception):
        def __init__(self, status: int, message: str, **extra):
            super().__init__(message)
            self.status, self.message, self.extra = status, message, extra

    @asynccontextmanager
    async def lifespan(_app):
        import anyio.to_thread

        anyio.to_thread.current_default_thread_limiter().total_tokens = cfg.workers  # the query worker pool
        yield

    app = FastAPI(
        title="graphtx",
        description="Patent prior-art search with invention graphs",
        version="1",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )  # /docs is served from local assets below; ReDoc (CDN only) is off

    # --- limits and errors (the last added runs first) --------------------------------
    app.add_middleware(Admission, limit=cfg.max_pending)
    app.add_middleware(
        BodyGuard, limit=cfg.max_request_bytes, timeout=cfg.read_timeout_s
    )  # an oversized body: 413 before admission
    app.add_middleware(HostAllowList, allowed=cfg.allowed_hosts)

    fastapi_schema = app.openapi

    def openapi() -> (
        dict
    ):  # the published schema carries this service's limits and this index's options (graphtx/serve/contract.py)
        from graphtx.serve.contract import tightened_schema

        schema = fastapi_schema()  # FastAPI's, made once
        if not schema.get("x-graphtx-tightened"):
            ix = holder["index"]
            tightened_schema(schema, cfg, ix.available_rankers(), ix.has_late)
            schema["x-graphtx-tightened"] = True
        return schema

    app.openapi = openapi

    @app.exception_handler(Problem)
    async def problem(_request, err: Problem):
        return JSONResponse({"error": err.message, **err.extra}, status_code=err.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request, err: RequestValidationError):
        details = [_in_words(e) for e in err.errors()]
        return JSONResponse({"error": "invalid request: " + "; ".join(details)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request, err: StarletteHTTPException):
        return JSONResponse(
            {"error": str(err.detail)}, status_code=err.status_code, headers=getattr(err, "headers", None)
        )

    def check_query(body: QueryIn) -> None:
        if (body.text is None) == (body.id is None):
            raise Problem(400, "give exactly one of 'text' and 'id'")
        if body.text is not None and len(body.text) > cfg.max_text_chars:
            raise Problem(413, f"text over {cfg.max_text_chars} characters")
        if body.text is not None and not body.text.strip():
            raise Problem(400, "text is empty")

    def run(fn):
        try:
            return fn()
        except DocumentNotFound as err:
            raise Problem(404, err.args[0], suggestions=getattr(err, "suggestions", [])) from None
        except ValueError as err:
            raise Problem(400, str(err)) from None

    # --- endpoints --------------------------------------------------------------------
    @app.get("/healthz")
    async def healthz() -> dict:  # on the event loop: never queued behind busy workers
        ix = holder["index"]
        return {
            "status": "ok",
            "count": ix.count,
            "dim": ix.dim,
            "kind": ix.manifest["kind"],
            "index_type": ix.spec.index_type,
            "shards": len(ix.shards),
            "model_fingerprint": ix.fingerprint,
            "ranker": ix.resolve_ranker(),
            "ranker_warnings": ix.ranker_warnings(
                ix.resolve_ranker()
            ),  # e.g. fitted on another field: graph features off
            "rankers": ix.available_rankers(),  # what the page's ranker menu offers
            "max_explain_hits": cfg.max_explain_hits,  # the page asks for at most this many claim charts at once
            "read_only": cfg.read_only,
        }

    @app.post("/search", responses=BODY_ERRORS)
    def search(body: SearchIn) -> dict:
        check_query(body)
        if body.k > cfg.max_k:
            raise Problem(400, f"k must be <= {cfg.max_k}")
        if body.explain and body.k > cfg.max_explain_hits:
            raise Problem(400, f"with explain, k must be <= {cfg.max_explain_hits}")
        if body.offset > cfg.max_offset:
            raise Problem(400, f"offset must be <= {cfg.max_offset}")
        ix = holder["index"]
        filters = run(body.filters)  # a bad date: 400
        found = run(
            lambda: search_claim_set(
                ix,
                body.text,
                body.k,
                doc_id=body.id,
                all_independent=body.all_independent,
                merge=body.merge,
                offset=body.offset,
                hybrid=body.hybrid,
                explain=body.explain,
                ranker=body.ranker,
                rerank=body.rerank,
                rerank_depth=body.rerank_depth,
                filters=filters,
            )
        )
        result = found.result
        out = found.to_json() | {"offset": body.offset, "k": body.k}
        out.pop("note", None)
        if found.merge == "single":  # one claim: nothing to say; several: the others named, as the CLI does
            out.pop("claims", None)
            out |= _claims_note(body.text)
        if body.svg and body.explain:
            for hit, item in zip(result.hits, out["hits"]):
                item["svg"] = hit_svgs(hit, ix.config.explain_max_nodes)
        return out

    @app.post("/explain", responses=BODY_ERRORS)
    def explain(body: ExplainIn) -> dict:
        check_query(body)
        ix = holder["index"]
        if body.doc_ids is not None:
            if not body.doc_ids or len(body.doc_ids) > cfg.max_explain_hits:
                raise Problem(400, f"doc_ids must list 1 to {cfg.max_explain_hits} documents")
            explanations = run(lambda: ix.explain(body.doc_ids, body.text, doc_id=body.id))
            out = [e.to_json() for e in explanations]
            if body.svg:
                for e, item in zip(explanations, out):
                    item["svg"] = hit_svgs(SimpleNamespace(explanation=e, doc_id=e.doc_id), ix.config.explain_max_nodes)
            return {"explanations": out}
        if body.k > cfg.max_explain_hits:
            raise Problem(400, f"k must be <= {cfg.max_explain_hits}")
        if body.offset > cfg.max_offset:
            raise Problem(400, f"offset must be <= {cfg.max_offset}")
        filters = run(body.filters)
        # the hits /search returns for the same body (a claim set: its first independent claim), each with its explanation
        found = run(
            lambda: search_claim_set(
                ix,
                body.text,
                body.k,
                doc_id=body.id,
                offset=body.offset,
                hybrid=body.hybrid,
                explain=True,
                ranker=body.ranker,
                rerank=body.rerank,
                rerank_depth=body.rerank_depth,
                filters=filters,
            )
        )
        result = found.result
        out = [h.to_json() for h in result.hits]
        if body.svg:
            for hit, item in zip(result.hits, out):
                item["svg"] = hit_svgs(hit, ix.config.explain_max_nodes)
        return {"explanations": out, "query": result.query.to_json(), "timings_ms": result.timings_ms}

    @app.post("/search/batch", responses=BODY_ERRORS)
    def search_batch(body: BatchIn) -> dict:
        """Several topics in one request (bounded): per topic its hits or why it was skipped, and the TREC run lines."""
        from graphtx.index.batch import Topic, one_per_spelling, output_qid, search_topic, trec_lines

        if len(body.topics) > cfg.max_batch_topics:
            raise Problem(
                413,
                f"at most {cfg.max_batch_topics} topics a request (serve.max_batch_topics): send several requests, "
                "or run `graphtx search INDEX --topics FILE --output RUN`",
            )
        if body.k > cfg.max_k:
            raise Problem(400, f"k must be <= {cfg.max_k}")
        for t in body.topics:
            if t.text is not None and t.doc_id is not None:
                raise Problem(400, f"topic {t.id!r}: give text or doc_id, not both")
            if t.text is not None and len(t.text) > cfg.max_text_chars:
                raise Problem(413, f"topic {t.id!r}: text over {cfg.max_text_chars} characters")
        ix = holder["index"]
        kwargs = {
            "hybrid": body.hybrid or None,
            "ranker": body.ranker,
            "rerank": body.rerank,
            "rerank_depth": body.rerank_depth,
            "explain": False,
            "filters": run(body.filters),
        }
        ranker = run(lambda: ix.resolve_ranker(body.ranker, body.hybrid or None))
        entries, seen = [], {}
        for n, t in enumerate(body.topics, 1):
            if t.id in seen:
                entries.append(
                    {"topic": t.id, "line": n, "skipped": f"repeated topic id (first at position {seen[t.id]})"}
                )
                continue
            seen[t.id] = n
            topic = Topic(t.id, n, text=t.text, doc_id=None if t.text is not None else (t.doc_id or t.id))
            entries.append(search_topic(ix, topic, body.k, body.all_independent, body.merge, kwargs))
        entries = one_per_spelling(entries)
        return {
            "results": [
                {
                    "topic": e["topic"],
                    "qid": output_qid(e),
                    "hits": e["hits"],
                    **({"note": e["note"]} if e.get("note") else {}),
                }
                for e in entries
                if "hits" in e
            ],
            "skipped": [
                {"topic": e["topic"], "position": e["line"], "reason": e["skipped"]}
                for e in entries
                if e.get("skipped")
            ],
            "run": trec_lines([e for e in entries if "hits" in e], body.tag or f"graphtx-{ranker}"),
        }

    @app.get("/documents/{doc_id}", responses=error_answers(404, 422, 503))
    def document(doc_id: str, graph: bool = True, svg: bool = False) -> dict:
        ix = holder["index"]
        record = run(lambda: ix.document(doc_id))
        out = record.to_json(graph=graph)
        if svg:
            out["svg"] = graph_svg(
                record.graph, max_nodes=ix.config.explain_max_nodes, label=f"{record.doc_id}: {record.graph.kind} graph"
            )
        return out

    add_pages(app)

    if not cfg.read_only:

        @app.delete("/documents/{doc_id}", responses=error_answers(404, 503))
        def delete_document(doc_id: str) -> dict:
            from graphtx.index.build import remove_documents

            with write_lock:
                ix = holder["index"]
                if doc_id not in ix:
                    raise Problem(404, f"document {doc_id!r} is not in the index")
                report = remove_documents(ix.store.dir, [doc_id], progress=False)
                fresh = Index.open(ix.store.dir, model=(ix.model, ix.tokenizer), search=ix.config)
                fresh.parser = ix.parser  # keep the loaded spaCy pipeline
                fresh.first_stage.model_profile = ix.first_stage.model_profile  # the same model: its recorded corpus
                fresh.field_check()  # before it serves /healthz (graphtx.text.field)
                holder["index"] = fresh
            return {"removed": doc_id, "count": report.count}

    return app


def serve(
    index_dir: str | Path,
    cfg: ServeConfig = ServeConfig(),
    search: SearchConfig = SearchConfig(),
    model=None,
    log_level: str = "info",
) -> None:
    """Open the index, listen on ``cfg.host:cfg.port`` and serve until interrupted.

    The address is bound before the index is opened, so a port in use fails at once with
    ``AddressUnavailable`` (a ValueError: exit 2) and not after loading the model. Ctrl-C or
    SIGTERM stop it gracefully (requests in flight get up to 5 s) and return normally (exit 0).
    """
    import sys

    from graphtx.serve.server import bind, bound_address, make_server

    sock = bind(cfg.host, cfg.port)
    try:
        app = create_app(Index.open(index_dir, search=search, model=model), cfg, search)
        server = make_server(app, cfg, log_level)
        print(
            f"graphtx serve: {index_dir} on {bound_address(sock)} ({cfg.workers} workers)", file=sys.stderr, flush=True
        )
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:  # uvicorn shut down gracefully, then re-raised the signal: a service's normal end
            pass
        print("graphtx serve: stopped", file=sys.stderr, flush=True)
    finally:
        sock.close()
