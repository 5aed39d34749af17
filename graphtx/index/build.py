"""Batch indexing: graphs directory + model → index directory; resumable and incremental.

Two steps:

1. **Embed and commit** (here). Graphs of one kind are read in order, encoded in batches and
   committed in chunks of ``chunk_size`` documents as immutable part files (vector,
   metadata, BM25 text, graph; see ``store.py``), each by an atomic rename. A run killed
   at any point (kill -9 included) loses at most the chunk being written; the same command
   continues after the last committed part and never commits a document twice.
2. **Finalize** (``finalize.py``): id map, shards, BM25 and, last, the manifest.

Incremental use, on an existing index directory:

* add:     ``build_index(model, new_graphs, out)``: graphs whose doc id is already indexed are skipped;
* replace: ``build_index(..., replace=True)``: they get a new version, which supersedes the old;
* remove:  ``remove_documents(out, ids)``.

An index holds the vectors of one model (fingerprint) and one graph kind; adding with another
model is refused.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphtx.atomic import replacing
from graphtx.graphs.graph import InventionGraph
from graphtx.graphs.parse import count_graphs, graphs_path, iter_graphs
from graphtx.index import late as late_store
from graphtx.index.config import IndexConfig
from graphtx.index.documents import CorpusLookup, metadata_rows
from graphtx.index.finalize import finalize
from graphtx.index.idmap import resolve_live
from graphtx.index.store import (
    DISPLAY_FIELDS,
    DOCUMENT_FIELDS,
    FORMAT,
    GRAPH_FIELDS,
    MODEL_DIR,
    IndexStore,
    index_config_of,
    part_schema,
)
from graphtx.lock import IndexLock
from graphtx.progress import progress_bar


@dataclass(frozen=True)
class BuildReport:
    out_dir: Path
    added: int  # document versions committed by this call (a resumed run counts only its own)
    replaced: int  # of those, documents that superseded an earlier version
    removed: int  # documents removed by this call
    not_found: tuple[str, ...]  # ids asked to be removed that are not in the index
    skipped_existing: int  # graphs whose doc id was indexed already (add mode), or committed earlier in this run
    duplicates: int  # graphs of a doc id met twice in the graphs directory (the first is kept)
    not_in_corpus: int  # documents without a corpus row: no metadata, BM25 over node texts
    corpus: str | None  # corpus directory metadata and BM25 text came from (None: none found)
    resumed: bool  # continued a killed run
    count: int  # live documents in the index
    shards: int
    rebuilt_shards: int
    seconds: float
    docs_per_second: float  # documents committed per second of the embed step (reading, encoding, writing parts)
    encode_seconds: float  # of which in the model's forward passes

    def to_json(self) -> dict:
        return {
            k: str(v) if isinstance(v, Path) else list(v) if isinstance(v, tuple) else v
            for k, v in dataclasses.asdict(self).items()
        }


# --- entry points --------------------------------------------------------------------


def build_index(
    model_dir: str | Path, graphs_dir: str | Path, out_dir: str | Path, cfg: IndexConfig = IndexConfig(), **kwargs
) -> BuildReport:
    """Embed the ``cfg.kind`` graphs of ``graphs_dir`` into the index at ``out_dir`` (created or extended).

    Holds the index's lock (``lock.py``) for the whole run: a second writer fails at once.
    Keyword arguments: see ``_build_index``.
    """
    graphs_path(graphs_dir)  # clear errors before anything is written
    for name in ("config.yaml", "model.pt", "fingerprint.txt"):
        if not (Path(model_dir) / name).exists():
            raise FileNotFoundError(f"{model_dir} is not a model directory: {name} is missing")
    with IndexLock(out_dir):
        return _build_index(model_dir, graphs_dir, out_dir, cfg, **kwargs)


def _build_index(
    model_dir: str | Path,
    graphs_dir: str | Path,
    out_dir: str | Path,
    cfg: IndexConfig = IndexConfig(),
    *,
    corpus_dir: str | Path | None = None,
    replace: bool = False,
    rebuild: bool = False,
    seed: int = 0,
    device: str = "cpu",
    progress: bool | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    ray_workers: int = 2,
    ray_gpus: float | None = None,
    merge: bool = False,
) -> BuildReport:
    """Embed the ``cfg.kind`` graphs of ``graphs_dir`` into the index at ``out_dir`` (created or extended).

    ``engine="ray"``: chunks are encoded by ``ray_workers`` Ray actors (``ray_gpus`` GPUs each) on the cluster at
    ``ray_address`` (or a local Ray); ids, parts and manifest are written here exactly as with ``local``, the FAISS shards
    by Ray tasks (``graphtx.index.sharded``); ``merge``: an IVF-PQ index's shards then merged into one on-disk index."""
    from graphtx.ray_engine import check_engine

    check_engine(engine)
    from graphtx.model.chunks import resolve_device
    from graphtx.model.io import fingerprint, load_model

    started = time.time()
    store = IndexStore(out_dir)
    graphs_file = graphs_path(graphs_dir)  # a clear error before anything is written
    loaded = load_model(model_dir, map_location=resolve_device(device))
    model, tokenizer = loaded.model, loaded.tokenizer
    fp, dim = fingerprint(model, tokenizer=tokenizer), model.out_dim
    state = _open_state(store, fp, dim, cfg.kind, model_dir, legacy_fp=fingerprint(model))
    store.clean_partial_files()
    late_store.clean_partial(store.dir)
    late = model.late is not None and cfg.late_storage != "none"

    mode = "replace" if replace else "add"
    versions = store.read_versions()
    next_id = int(versions.column("faiss_id").to_numpy().max()) + 1 if versions.num_rows else 0
    next_part = max(store.part_numbers(), default=-1) + 1
    run = {"graphs": str(graphs_file.parent.resolve()), "mode": mode, "first_faiss_id": next_id}
    previous = state.get("run")
    resumed = bool(previous and previous["graphs"] == run["graphs"] and previous["mode"] == mode)
    if resumed:
        run = previous
    state["run"] = run
    store.write_state(state)
    if cfg.copy_model:
        _copy_model(model_dir, store.dir / MODEL_DIR, state["model_fingerprint"])

    live = resolve_live(versions, store.removed_ids())
    if replace:  # skip only what this run committed before it was killed
        mine = versions.filter(pc.greater_equal(versions.column("faiss_id"), run["first_faiss_id"]))
        skip = set(mine.column("doc_id").to_pylist())
    else:
        skip = set(live.doc_id)
    corpus = _corpus_dir(corpus_dir, graphs_dir)
    lookup = CorpusLookup(corpus, cfg.bm25_max_chars, cfg.document_max_chars) if corpus else None

    added = replaced = skipped = duplicates = not_in_corpus = 0
    seen: set[str] = set()
    schema = part_schema(dim)
    encode_seconds = 0.0

    from graphtx.model.chunks import ChunkEncoder, encode_chunk, load_chunk_encoder

    encode_local = ChunkEncoder(
        model, tokenizer, cfg.batch_size, late
    )  # (vectors, node vectors, offsets, seconds): as a Ray actor's

    def commit(chunk: list[InventionGraph], encoded: tuple) -> None:
        nonlocal next_id, next_part, added, replaced, not_in_corpus, encode_seconds
        vectors, nodes, offsets, seconds = encoded
        encode_seconds += seconds
        meta, missing = metadata_rows(chunk, lookup, cfg.bm25_max_chars)
        ids = np.arange(next_id, next_id + len(chunk), dtype=np.int64)
        table = pa.table(
            {
                "faiss_id": ids,
                "doc_id": [g.doc_id for g in chunk],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), dim),
                **{
                    f: [m[f] for m in meta]
                    for f in ("title", "date", "ipc", "cpc", "text", *DISPLAY_FIELDS, *DOCUMENT_FIELDS)
                },
                **{f: [getattr(g, f) for g in chunk] for f in GRAPH_FIELDS},
            },
            schema=schema,
        )
        if late:  # node vectors first: a committed part always has them
            late_store.write_part(store.dir, next_part, nodes, offsets, cfg.late_storage)
        store.commit_part(next_part, table, row_group_size=cfg.part_row_group)
        replaced += sum(1 for g in chunk if g.doc_id in live)
        added += len(chunk)
        not_in_corpus += missing
        next_id += len(chunk)
        next_part += 1

    def chunks() -> Iterator[list[InventionGraph]]:
        """The graphs to embed, ``cfg.chunk_size`` at a time, in file order (repeats and skipped ids counted)."""
        nonlocal duplicates, skipped
        chunk: list[InventionGraph] = []
        for graph in iter_graphs(graphs_dir, kind=cfg.kind):
            bar.update(1)
            if graph.doc_id in seen:
                duplicates += 1
                continue
            seen.add(graph.doc_id)
            if graph.doc_id in skip:
                skipped += 1
                continue
            chunk.append(graph)
            if len(chunk) >= cfg.chunk_size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    total = count_graphs(graphs_dir, cfg.kind)
    t_embed = time.time()
    bar = progress_bar(total=total, desc=f"index {cfg.kind}", unit="doc", enabled=progress)
    with bar:
        if engine == "ray":
            from graphtx.ray_engine import map_ordered

            encoded = map_ordered(
                chunks(),
                load_chunk_encoder,
                (str(Path(model_dir).resolve()), cfg.batch_size, late),
                encode_chunk,
                workers=ray_workers,
                num_gpus=ray_gpus,
                address=ray_address,
            )
        else:
            encoded = ((chunk, encode_local(chunk)) for chunk in chunks())
        with contextlib.closing(encoded):  # an error in commit: the Ray actors go at once
            for chunk, result in encoded:
                commit(chunk, result)
    embed_seconds = time.time() - t_embed

    sources = {
        "graphs": run["graphs"],
        "corpus": str(Path(corpus).resolve()) if corpus else None,
        "kind": cfg.kind,
        "mode": mode,
    }
    fill = None
    if engine == "ray":
        from graphtx.index.sharded import ray_filler

        fill = ray_filler(ray_workers, ray_address)
    manifest, rebuilt = finalize(
        store,
        cfg,
        seed=seed,
        rebuild=rebuild,
        source=sources,
        parse_config=_parse_config(graphs_dir),
        progress=progress,
        fill_shards=fill,
    )
    if merge:
        from graphtx.index.sharded import merge_locked

        manifest = merge_locked(store)
    state["run"] = None
    store.write_state(state)
    return BuildReport(
        out_dir=store.dir,
        added=added,
        replaced=replaced,
        removed=0,
        not_found=(),
        skipped_existing=skipped,
        duplicates=duplicates,
        not_in_corpus=not_in_corpus,
        corpus=sources["corpus"],
        resumed=resumed,
        count=manifest["count"],
        shards=len(manifest["shards"]),
        rebuilt_shards=rebuilt,
        seconds=round(time.time() - started, 2),
        docs_per_second=round(added / embed_seconds, 1) if added and embed_seconds > 0 else 0.0,
        encode_seconds=round(encode_seconds, 2),
    )


def remove_documents(
    out_dir: str | Path,
    doc_ids: list[str],
    cfg: IndexConfig | None = None,
    seed: int | None = None,
    progress: bool | None = None,
) -> BuildReport:
    """Take documents out of an index by doc id; ids not in the index are reported, not an error.

    ``cfg`` / ``seed``: default to those the index was built with (its manifest). Holds the index's lock.
    """
    if not Path(out_dir).is_dir():
        IndexStore(out_dir).require_manifest()  # "not an index directory"
    with IndexLock(out_dir):
        return _remove_documents(out_dir, doc_ids, cfg, seed, progress)


def _remove_documents(
    out_dir, doc_ids: list[str], cfg: IndexConfig | None, seed: int | None, progress: bool | None
) -> BuildReport:
    started = time.time()
    store = IndexStore(out_dir)
    manifest = store.manifest()
    if store.state() is None:
        manifest = store.require_manifest()
    cfg = cfg or (index_config_of(manifest) if manifest else IndexConfig())
    seed = seed if seed is not None else (manifest or {}).get("seed", 0)
    store.clean_partial_files()
    live = store.live()
    wanted = list(dict.fromkeys(doc_ids))
    found = [d for d in wanted if d in live]
    not_found = tuple(d for d in wanted if d not in live)
    if found:
        store.add_removed([int(live.faiss_id[live.position_of(d)]) for d in found], found)
    manifest, rebuilt = finalize(store, cfg, seed=seed, progress=progress)
    return BuildReport(
        out_dir=store.dir,
        added=0,
        replaced=0,
        removed=len(found),
        not_found=not_found,
        skipped_existing=0,
        duplicates=0,
        not_in_corpus=0,
        corpus=None,
        resumed=False,
        count=manifest["count"],
        shards=len(manifest["shards"]),
        rebuilt_shards=rebuilt,
        seconds=round(time.time() - started, 2),
        docs_per_second=0.0,
        encode_seconds=0.0,
    )


def write_bm25(out_dir: str | Path, progress: bool | None = None) -> BuildReport:
    """Build (or refresh) the BM25 state ``bm25/`` of an existing index; no document is added or removed.

    For an index built with ``index.bm25: false``: readers (search, the service) never write it,
    they build it in memory at each start instead.
    """
    started = time.time()
    store = IndexStore(out_dir)
    manifest = store.require_manifest()
    cfg = dataclasses.replace(index_config_of(manifest), bm25=True)
    with IndexLock(store.dir):
        manifest, rebuilt = finalize(store, cfg, seed=manifest.get("seed", 0), progress=progress)
    return BuildReport(
        out_dir=store.dir,
        added=0,
        replaced=0,
        removed=0,
        not_found=(),
        skipped_existing=0,
        duplicates=0,
        not_in_corpus=0,
        corpus=None,
        resumed=False,
        count=manifest["count"],
        shards=len(manifest["shards"]),
        rebuilt_shards=rebuilt,
        seconds=round(time.time() - started, 2),
        docs_per_second=0.0,
        encode_seconds=0.0,
    )


# --- helpers ---------------------------------------------------------------------------


def _open_state(store: IndexStore, fp: str, dim: int, kind: str, model_dir, legacy_fp: str | None = None) -> dict:
    """The build state of ``store``, created for a new index; refuses another model or graph kind.

    ``legacy_fp``: the model's fingerprint without its tokenizer, which indexes built before the
    tokenizer was fingerprinted record.
    """
    state = store.state()
    if state is None:
        manifest = store.manifest()
        if manifest is not None:  # an index whose state file was lost: the manifest says the same
            state = {
                "format": FORMAT,
                "model_fingerprint": manifest["model_fingerprint"],
                "dim": manifest["dim"],
                "kind": manifest["kind"],
                "run": None,
            }
        elif store.part_numbers():
            raise ValueError(
                f"{store.dir} holds document parts but no state.json or manifest.json: not an index graphtx can continue"
            )
        else:
            return {
                "format": FORMAT,
                "model_fingerprint": fp,
                "dim": dim,
                "kind": kind,
                "model_dir": str(Path(model_dir).resolve()),
                "run": None,
            }
    if state["model_fingerprint"] not in (fp, legacy_fp):
        raise ValueError(
            f"index {store.dir} holds vectors of model {state['model_fingerprint'][:12]}…, but {model_dir} is model {fp[:12]}…: "
            "vectors of two models cannot share an index: leave out --model (the index's own model is used), or write to a new --out"
        )
    if state["kind"] != kind:
        raise ValueError(
            f"index {store.dir} holds {state['kind']} graphs; index.kind is {kind} (use a new --out for another kind)"
        )
    return state


def _copy_model(model_dir, target: Path, fp: str) -> None:
    if (target / "fingerprint.txt").exists():
        if (target / "fingerprint.txt").read_text().strip() != fp:
            raise ValueError(f"{target} holds another model than the index's; remove it or use a new --out")
        return
    with replacing(target) as tmp:
        shutil.copytree(model_dir, tmp, ignore=shutil.ignore_patterns(".*"))


def _corpus_dir(corpus_dir, graphs_dir) -> Path | None:
    """``corpus_dir`` if given, else the corpus the graphs were parsed from, when it is still there."""
    if corpus_dir is not None:
        return Path(corpus_dir)
    manifest = Path(graphs_dir) / "manifest.json"
    if manifest.exists():
        corpus = json.loads(manifest.read_text()).get("corpus")
        if corpus and (Path(corpus) / "documents.parquet").exists():
            return Path(corpus)
    return None


def _parse_config(graphs_dir) -> dict | None:
    manifest = Path(graphs_dir) / "manifest.json"
    return json.loads(manifest.read_text()).get("config") if manifest.exists() else None
