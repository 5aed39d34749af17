"""Parse stage: corpus directory → graphs directory.

Layout of a graphs directory::

    graphs.parquet   one row per (document, kind) (GRAPH_SCHEMA)
    errors.jsonl     documents or graphs not written, with the reason
    manifest.json    counts per kind, text sources used, rule hits, config, versions, and the size and
                     sha256 of graphs.parquet (``checksums``), checked whenever a stage opens the graphs

The files are staged in ``.partial/`` and committed whole, manifest last (:mod:`graphtx.atomic`):
an interrupted or disk-full re-run leaves the previous graphs byte-identical.

``--engine ray`` parses in shards of ``parse.shard_size`` documents (row ranges of documents.parquet),
one Ray task each; a finished shard's results are committed into the parse cache (``cfg.cache_dir``; `graphtx parse`
gives it a default), else ``.partial/shards/``, with a journal
(:mod:`graphtx.shards`) and the same command re-run after a kill redoes only the unfinished shards.
The results are then read back in corpus order through the same writer as the local engine, so both
engines write the same files.

Languages: documents whose ``lang`` is neither English nor unknown are parsed only when
``parse.languages`` names a spaCy pipeline for their language; otherwise they are skipped, each
listed in ``errors.jsonl`` with the reason, and counted in the manifest (``languages``: documents
per language; ``skipped_languages``: those not parsed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import pickle
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from graphtx import integrity
from graphtx.atomic import MANIFEST_FILE, StagedDir, atomic_write_bytes, interrupted_run
from graphtx.corpus.base import SkippedRecord
from graphtx.corpus.schema import PatentDocument
from graphtx.corpus.store import ERRORS_FILE, TableWriter, count_documents, documents_path, iter_documents
from graphtx.graphs.builder import GraphBuilder
from graphtx.graphs.config import ParseConfig
from graphtx.graphs.graph import GRAPH_SCHEMA, InventionGraph
from graphtx.parallel import bounded_map
from graphtx.progress import progress_bar
from graphtx.shards import ShardJournal, content_identity, plan_shards

GRAPHS_FILE = "graphs.parquet"

_worker_builder: GraphBuilder | None = None  # one per worker process, set by _init_worker
_worker_cfg: ParseConfig | None = None
_language_builders: dict[str, GraphBuilder] = {}  # parse.languages pipelines, loaded on first use
ENGLISH = ("", "en")  # a document without a language is taken as English


def _init_worker(cfg: ParseConfig) -> None:
    global _worker_builder, _worker_cfg
    _worker_builder, _worker_cfg = GraphBuilder(cfg), cfg
    _language_builders.clear()


def document_language(doc: PatentDocument) -> str:
    """``"DE"``, ``"de-DE"`` -> ``"de"``; "" when unknown."""
    return (doc.lang or "").strip().lower().replace("_", "-").split("-")[0]


def _builder_for(lang: str) -> GraphBuilder | None:
    if lang in ENGLISH:
        return _worker_builder
    model = dict(_worker_cfg.languages).get(lang) if _worker_cfg is not None else None
    if model is None:
        return None
    if lang not in _language_builders:
        _language_builders[lang] = GraphBuilder(dataclasses.replace(_worker_cfg, spacy_model=model))
    return _language_builders[lang]


def _build_one(doc: PatentDocument) -> tuple[str, list[InventionGraph], str, str]:
    """(doc id, graphs, why not parsed or "", language)."""
    lang = document_language(doc)
    try:
        builder = _builder_for(lang)
        if builder is None:
            return (
                doc.id,
                [],
                f"language {lang!r} is not English and parse.languages names no spaCy pipeline for it: not parsed (e.g. parse.languages: {{{lang}: {lang}_core_news_sm}})",
                lang,
            )
        return doc.id, list(builder.build(doc).values()), "", lang
    except Exception as err:  # reported per document; a batch job goes on
        return doc.id, [], f"{type(err).__name__}: {err}", lang


@dataclass(frozen=True)
class ParseReport:
    documents: int
    graphs: int
    skipped: int
    out_dir: Path
    skipped_languages: dict = dataclasses.field(default_factory=dict)  # language -> documents not parsed for it

    def summary(self) -> dict:
        """``graphtx parse --json``."""
        return {
            "out": str(self.out_dir),
            "documents": self.documents,
            "graphs": self.graphs,
            "skipped": self.skipped,
            "skipped_languages": self.skipped_languages,
        }

    def lines(self) -> list[str]:
        """What ``graphtx parse`` prints."""
        lines = [
            f"parsed {self.documents} documents into {self.graphs} graphs in {self.out_dir}",
            f"skipped: {self.skipped}" + (f" (listed in {self.out_dir / 'errors.jsonl'})" if self.skipped else ""),
        ]
        if self.skipped_languages:
            counts = ", ".join(f"{n} in {lang!r}" for lang, n in self.skipped_languages.items())
            lines.append(f"not English, not parsed: {counts} (parse.languages maps a language to a spaCy pipeline)")
        return lines


def parse_corpus(
    corpus_dir: str | Path,
    out_dir: str | Path,
    cfg: ParseConfig = ParseConfig(),
    progress: bool | None = None,
    engine: str = "local",
    ray_address: str | None = None,
) -> ParseReport:
    """``engine``: ``local`` (``cfg.workers`` processes) or ``ray`` (``cfg.workers`` actors on the cluster at
    ``ray_address``, or a local Ray, over shards of ``cfg.shard_size`` documents, resumable); the same files either way."""
    from graphtx.ray_engine import check_engine

    check_engine(engine)
    out = Path(out_dir)
    started = time.time()
    total = count_documents(corpus_dir)
    with StagedDir(out, "`graphtx parse`", (GRAPHS_FILE, ERRORS_FILE), resumable=engine == "ray") as staged:
        writer = TableWriter(staged.path(GRAPHS_FILE), GRAPH_SCHEMA, rows_per_group=1024)
        kinds, sources, rule_hits, nodes = Counter(), Counter(), Counter(), Counter()
        languages, skipped_languages = Counter(), Counter()
        skipped = documents = 0
        try:
            with open(staged.path(ERRORS_FILE), "w", encoding="utf-8") as errors:
                if (
                    engine == "ray" or cfg.cache_dir
                ):  # shards journaled: in the cache when there is one, else in .partial/
                    folder = cache_folder(corpus_dir, cfg) if cfg.cache_dir else staged.path("shards")
                    results = _sharded_results(corpus_dir, folder, cfg, engine, ray_address)
                else:
                    results = bounded_map(
                        _build_one,
                        iter_documents(corpus_dir),
                        workers=cfg.workers,
                        chunk_size=cfg.chunk_size,
                        initializer=_init_worker,
                        initargs=(cfg,),
                    )
                for doc_id, graphs, reason, lang in progress_bar(
                    results, total=total, desc="parse", unit="doc", enabled=progress
                ):
                    languages[lang or "unknown"] += 1
                    if reason.startswith(f"language {lang!r} is not English"):
                        skipped_languages[lang] += 1
                    if reason:
                        errors.write(SkippedRecord(str(corpus_dir), "document", reason, doc_id).to_json() + "\n")
                        skipped += 1
                        continue
                    documents += 1
                    for g in graphs:
                        if g.num_nodes == 0:
                            errors.write(
                                SkippedRecord(
                                    str(corpus_dir), g.kind, f"no features found in the {g.text_source} text", doc_id
                                ).to_json()
                                + "\n"
                            )
                            skipped += 1
                            continue
                        writer.add(g.to_row())
                        kinds[g.kind] += 1
                        sources[f"{g.kind}:{g.text_source}"] += 1
                        nodes[g.kind] += g.num_nodes
                        rule_hits.update(g.meta.get("rule_hits", {}) if g.kind == "description" else {})
            writer.close()
        except BaseException:
            writer.abort()
            raise
        manifest = {
            "corpus": str(corpus_dir),
            "documents": documents,
            "graphs": dict(kinds),
            "skipped": skipped,
            "languages": dict(sorted(languages.items())),
            "skipped_languages": dict(sorted(skipped_languages.items())),
            "text_sources": dict(sources),
            "mean_nodes": {k: round(nodes[k] / kinds[k], 1) for k in kinds},
            "rule_hits_description_graphs": dict(rule_hits),
            "config": dataclasses.asdict(cfg),
            "seconds": round(time.time() - started, 2),
            integrity.CHECKSUMS_KEY: integrity.record(staged.partial, [GRAPHS_FILE]),
        }
        staged.commit(integrity.seal(manifest))
    return ParseReport(documents, sum(kinds.values()), skipped, out, dict(skipped_languages))


def parse_fingerprint(corpus_dir: str | Path, cfg: ParseConfig) -> dict:
    """What the graphs of a corpus depend on: the documents file's contents (size and sha256: a corpus ingested anew into
    the same bytes, or moved, keeps its cache), the shard plan, the
    settings that change output (not workers or chunk size), the rules' contents, the spaCy pipeline's version and
    graphtx's parse code (graphtx/graphs/*.py) as code: reformatting it keeps the cache.
    The key of a parse's shard journal, and of its folder in a parse cache."""
    import hashlib
    from importlib import metadata

    path = documents_path(corpus_dir)
    settings = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in ("workers", "chunk_size", "cache_dir")}
    rules = hashlib.sha256()
    for f in sorted(cfg.rules_path.rglob("*.yaml")):
        rules.update(f.relative_to(cfg.rules_path).as_posix().encode() + b"\0" + f.read_bytes())
    try:
        pipeline = metadata.version(cfg.spacy_model.replace("_", "-"))
    except metadata.PackageNotFoundError:
        pipeline = "unknown"
    code = integrity.source_digest(
        Path(__file__).parent.glob("*.py")
    )  # graphtx's own parse code, as code (not its layout)
    return {
        "stage": "parse",
        "documents": content_identity(path),
        "shards": len(plan_shards(count_documents(corpus_dir), cfg.shard_size)),
        "config": settings,
        "rules": rules.hexdigest(),
        "spacy_pipeline": f"{cfg.spacy_model} {pipeline}",
        "code": code,
    }


def cache_folder(corpus_dir: str | Path, cfg: ParseConfig) -> Path:
    """The folder of this parse's shards in ``cfg.cache_dir``: ``parse-`` and 16 hex digits of its fingerprint."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(parse_fingerprint(corpus_dir, cfg), sort_keys=True).encode()).hexdigest()[:16]
    return Path(cfg.cache_dir).expanduser() / f"parse-{digest}"


def _sharded_results(
    corpus_dir: str | Path, folder: Path, cfg: ParseConfig, engine: str, address: str | None
) -> Iterator[tuple]:
    """``(doc id, graphs, reason, lang)`` per document in corpus order, parsed in shards of ``cfg.shard_size`` on Ray actors
    (``engine="ray"``) or the local worker pool, each shard's results pickled into ``folder`` and journaled as it finishes.

    Shards a killed run (or an earlier run with the same fingerprint, in a parse cache) journaled are not parsed again.
    Results are yielded as soon as every shard before them is in."""
    path = documents_path(corpus_dir)
    shards = plan_shards(count_documents(corpus_dir), cfg.shard_size)
    journal = ShardJournal(folder, parse_fingerprint(corpus_dir, cfg))
    ready = set(journal.open())
    todo = [(i, start, stop) for i, (start, stop) in enumerate(shards) if i not in ready]
    follow = 0  # the next shard to yield

    def drain() -> Iterator[tuple]:
        nonlocal follow
        while follow in ready:
            yield from pickle.loads(journal.path(follow, ".pkl").read_bytes())
            follow += 1

    def commit(i: int, results: list) -> None:
        atomic_write_bytes(journal.path(i, ".pkl"), pickle.dumps(results, protocol=5))
        journal.commit(i, [journal.path(i, ".pkl")], documents=len(results))
        ready.add(i)

    yield from drain()
    if todo and engine == "ray":
        from graphtx.ray_engine import map_unordered

        tasks = [
            (i, (str(path.resolve()), start, stop)) for i, start, stop in todo
        ]  # the actors read their rows from the file
        finished = map_unordered(tasks, _shard_worker, (cfg,), _parse_rows, workers=cfg.workers, address=address)
        with contextlib.closing(finished):  # closed at once on an error: actors go
            for i, results in finished:
                commit(i, results)
                yield from drain()
    elif todo:  # the local pool keeps input order: the documents of the shards to do, in order, cut back into shards
        from graphtx.corpus.store import document_from_row, read_rows

        documents = (document_from_row(row) for _, start, stop in todo for row in read_rows(path, start, stop))
        results = bounded_map(
            _build_one,
            documents,
            workers=cfg.workers,
            chunk_size=cfg.chunk_size,
            initializer=_init_worker,
            initargs=(cfg,),
        )
        with contextlib.closing(results):
            for i, start, stop in todo:
                commit(i, list(itertools.islice(results, stop - start)))
                yield from drain()
    if follow != len(shards):
        raise RuntimeError(f"parse in shards: shards {sorted(set(range(len(shards))) - ready)} came back empty")


def _shard_worker(device: str, cfg: ParseConfig) -> None:
    """A Ray actor's initialiser (``graphtx.ray_engine``): spaCy and the rules loaded once, as a local worker's."""
    _init_worker(cfg)


def _parse_rows(state: None, documents_file: str, start: int, stop: int) -> list[tuple]:
    """``(doc id, graphs, reason, lang)`` of rows ``start .. stop - 1`` of ``documents_file``, in file order: one Ray shard.
    The file must be on storage every node sees (one machine, or a shared file system)."""
    from graphtx.corpus.store import document_from_row, read_rows

    return [_build_one(document_from_row(row)) for row in read_rows(documents_file, start, stop)]


def graphs_path(graphs_dir: str | Path) -> Path:
    """graphs.parquet of a graphs directory, checked against the manifest's checksum (once per process and file version)."""
    path = Path(graphs_dir) / GRAPHS_FILE
    if not path.exists():
        raise FileNotFoundError(
            f"{graphs_dir} is not a graphs directory: {GRAPHS_FILE} is missing{interrupted_run(graphs_dir)} (run `graphtx parse` first)"
        )
    mend = f"Run `graphtx parse CORPUS --out {graphs_dir}` again."
    manifest = integrity.read_manifest(Path(graphs_dir) / MANIFEST_FILE, what="graphs directory", mend=mend)
    recorded = (manifest or {}).get(integrity.CHECKSUMS_KEY)
    if recorded:  # graphs parsed before checksums existed carry none
        integrity.require(graphs_dir, recorded, what="graphs directory", mend=mend, hash_limit=None)
    return path


def count_graphs(graphs_dir: str | Path, kind: str | None = None) -> int:
    path = graphs_path(graphs_dir)
    if kind is None:
        return pq.ParquetFile(path).metadata.num_rows
    return pq.read_table(path, columns=["kind"]).column("kind").to_pylist().count(kind)


def iter_graphs(
    graphs_dir: str | Path, kind: str | None = None, ids: set[str] | None = None
) -> Iterator[InventionGraph]:
    for batch in pq.ParquetFile(graphs_path(graphs_dir)).iter_batches(batch_size=512):
        for row in batch.to_pylist():
            if (kind is None or row["kind"] == kind) and (ids is None or row["doc_id"] in ids):
                yield InventionGraph.from_row(row)


CLAIM_KINDS = ("first_claim", "all_claims")  # the graph kinds meant to be built from claims
FALLBACK_SOURCES = (
    "abstract",
    "description",
    "title",
)  # what a claim kind's graph is built from when a document has no claims


def text_sources(graphs_dir: str | Path, kind: str) -> dict[str, str]:
    """{doc id: text_source} of the ``kind`` graphs: which text each was built from (a claim kind falls back to the
    abstract, description or title of a document without claims)."""
    table = pq.read_table(graphs_path(graphs_dir), columns=["doc_id", "text_source"], filters=[("kind", "=", kind)])
    return dict(zip(table.column("doc_id").to_pylist(), table.column("text_source").to_pylist()))


def load_graph(graphs_dir: str | Path, doc_id: str, kind: str) -> InventionGraph:
    """The ``kind`` graph of ``doc_id``; a typed id (``US8418590B2``) finds ``US-8418590-B2``, a miss names the closest ids."""
    from graphtx.corpus.ids import IdResolver

    path = graphs_path(graphs_dir)
    rows = pq.read_table(path, filters=[("doc_id", "=", doc_id), ("kind", "=", kind)]).to_pylist()
    if rows:
        return InventionGraph.from_row(rows[0])
    ids = pq.read_table(path, columns=["doc_id", "kind"], filters=[("kind", "=", kind)]).column("doc_id").to_pylist()
    resolver = IdResolver(ids)
    found = resolver.resolve(doc_id)
    if len(found) == 1:
        return load_graph(graphs_dir, found[0], kind)
    suggestions = found or resolver.suggest(doc_id)
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    raise KeyError(f"no {kind} graph for id {doc_id!r} in {graphs_dir}{hint}")
