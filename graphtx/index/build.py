"""Batch indexing: graphs directory + model → index directory; resumable and incremental.

Two steps:

1. **Embed and commit.** Graphs of one kind are read in order, encoded in batches and
   committed in chunks of ``chunk_size`` documents as immutable part files (vector,
   metadata, BM25 text, graph; see ``store.py``), each by an atomic rename. A run killed
   at any point (kill -9 included) loses at most the chunk being written; the same command
   continues after the last committed part and never commits a document twice.
2. **Finalize.** From the parts and removals: the live id map, one FAISS index per shard
   (a run of parts up to ``shard_size`` documents), the BM25 index, and last the manifest,
   written atomically. Files are named by what they hold, so a killed finalize leaves the
   previous manifest and its files intact, and only shards whose documents changed are
   rebuilt (a removal from a flat or IVF-PQ shard is done in place).

Incremental use, on an existing index directory:

* add:     ``build_index(model, new_graphs, out)``: graphs whose doc id is already indexed are skipped;
* replace: ``build_index(..., replace=True)``: they get a new version, which supersedes the old;
* remove:  ``remove_documents(out, ids)``.

An index holds the vectors of one model (fingerprint) and one graph kind; adding with another
model is refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tqdm import tqdm

from graphtx import integrity
from graphtx.atomic import replacing
from graphtx.config import IndexConfig
from graphtx.errors import IntegrityError
from graphtx.graphs.graph import InventionGraph
from graphtx.graphs.parse import count_graphs, graphs_path, iter_graphs
from graphtx.index import faiss_index
from graphtx.index import late as late_store
from graphtx.index.documents import CorpusLookup, metadata_rows
from graphtx.index.faiss_index import METRIC, IndexSpec
from graphtx.index.hybrid import BM25Index
from graphtx.lock import IndexLock
from graphtx.index.store import (
    BM25_DIR,
    DISPLAY_FIELDS,
    FORMAT,
    GRAPH_FIELDS,
    MODEL_DIR,
    PARTS_DIR,
    SHARDS_DIR,
    IdMap,
    IndexStore,
    atomic_write_table,
    ids_digest,
    part_schema,
    resolve_live,
)


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
        return {k: str(v) if isinstance(v, Path) else list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}


# --- entry points --------------------------------------------------------------------


def build_index(model_dir: str | Path, graphs_dir: str | Path, out_dir: str | Path, cfg: IndexConfig = IndexConfig(), **kwargs) -> BuildReport:
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
    ray_gpus: float = 0.0,
) -> BuildReport:
    """Embed the ``cfg.kind`` graphs of ``graphs_dir`` into the index at ``out_dir`` (created or extended).

    ``engine="ray"``: chunks are encoded by ``ray_workers`` Ray actors (``ray_gpus`` GPUs each) on the cluster at
    ``ray_address`` (or a local Ray); ids, parts, shards and manifest are written here exactly as with ``local``."""
    from graphtx.ray_engine import check_engine

    check_engine(engine)
    from graphtx.model.io import fingerprint, load_model
    from graphtx.text.bpe import PatentTokenizer

    started = time.time()
    store = IndexStore(out_dir)
    graphs_file = graphs_path(graphs_dir)  # a clear error before anything is written
    model, _ = load_model(model_dir, map_location=_device(device))
    tokenizer = PatentTokenizer.load(model_dir)
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
    lookup = CorpusLookup(corpus, cfg.bm25_max_chars) if corpus else None

    added = replaced = skipped = duplicates = not_in_corpus = 0
    seen: set[str] = set()
    schema = part_schema(dim)
    encode_seconds = 0.0

    def encode_local(chunk: list[InventionGraph]) -> tuple:
        """(vectors (b, dim), node vectors (N, L) or None, offsets (b + 1,) or None, seconds): what a Ray actor returns."""
        t0 = time.time()
        vectors = model.encode(chunk, tokenizer, batch_size=cfg.batch_size).to(dtype=_float32()).numpy()  # (b, dim)
        nodes = offsets = None
        if late:
            nodes, _, offsets = model.encode_nodes(chunk, tokenizer, batch_size=cfg.batch_size)  # (N, L), (b + 1,)
            nodes, offsets = nodes.numpy(), offsets.numpy()
        return vectors, nodes, offsets, time.time() - t0

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
                **{f: [m[f] for m in meta] for f in ("title", "date", "ipc", "cpc", "text", *DISPLAY_FIELDS)},
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
    bar = tqdm(total=total, desc=f"index {cfg.kind}", unit="doc", disable=None if progress is None else not progress, file=sys.stderr)
    with bar:
        if engine == "ray":
            from graphtx.ray_engine import encode_chunks

            encoded = encode_chunks(chunks(), model_dir, device=device, batch_size=cfg.batch_size, late=late, workers=ray_workers,
                                    num_gpus=ray_gpus, address=ray_address)  # fmt: skip
        else:
            encoded = ((chunk, encode_local(chunk)) for chunk in chunks())
        for chunk, result in encoded:
            commit(chunk, result)
    embed_seconds = time.time() - t_embed

    sources = {"graphs": run["graphs"], "corpus": str(Path(corpus).resolve()) if corpus else None, "kind": cfg.kind, "mode": mode}
    manifest, rebuilt = finalize(store, cfg, seed=seed, rebuild=rebuild, source=sources, parse_config=_parse_config(graphs_dir), progress=progress)
    state["run"] = None
    store.write_state(state)
    return BuildReport(
        out_dir=store.dir, added=added, replaced=replaced, removed=0, not_found=(), skipped_existing=skipped,
        duplicates=duplicates, not_in_corpus=not_in_corpus, corpus=sources["corpus"], resumed=resumed, count=manifest["count"],
        shards=len(manifest["shards"]), rebuilt_shards=rebuilt, seconds=round(time.time() - started, 2),
        docs_per_second=round(added / embed_seconds, 1) if added and embed_seconds > 0 else 0.0, encode_seconds=round(encode_seconds, 2),
    )  # fmt: skip


def remove_documents(out_dir: str | Path, doc_ids: list[str], cfg: IndexConfig | None = None, seed: int | None = None, progress: bool | None = None) -> BuildReport:
    """Take documents out of an index by doc id; ids not in the index are reported, not an error.

    ``cfg`` / ``seed``: default to those the index was built with (its manifest). Holds the index's lock.
    """
    if not Path(out_dir).is_dir():
        IndexStore(out_dir).require_manifest()  # "not an index directory"
    with IndexLock(out_dir):
        return _remove_documents(out_dir, doc_ids, cfg, seed, progress)


def _remove_documents(out_dir, doc_ids: list[str], cfg: IndexConfig | None, seed: int | None, progress: bool | None) -> BuildReport:
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
        out_dir=store.dir, added=0, replaced=0, removed=len(found), not_found=not_found, skipped_existing=0, duplicates=0,
        not_in_corpus=0, corpus=None, resumed=False, count=manifest["count"], shards=len(manifest["shards"]), rebuilt_shards=rebuilt,
        seconds=round(time.time() - started, 2), docs_per_second=0.0, encode_seconds=0.0,
    )  # fmt: skip


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
        out_dir=store.dir, added=0, replaced=0, removed=0, not_found=(), skipped_existing=0, duplicates=0,
        not_in_corpus=0, corpus=None, resumed=False, count=manifest["count"], shards=len(manifest["shards"]), rebuilt_shards=rebuilt,
        seconds=round(time.time() - started, 2), docs_per_second=0.0, encode_seconds=0.0,
    )  # fmt: skip


# --- finalize ------------------------------------------------------------------------


def finalize(
    store: IndexStore,
    cfg: IndexConfig,
    *,
    seed: int = 0,
    rebuild: bool = False,
    source: dict | None = None,
    parse_config: dict | None = None,
    progress: bool | None = None,
) -> tuple[dict, int]:
    """Id map, shards, BM25 and manifest from the committed parts; returns (manifest, shards rebuilt)."""
    started = time.time()
    state = store.state()
    if state is None:
        raise FileNotFoundError(f"{store.dir} has no {store.dir / 'state.json'}: not an index directory written by graphtx index")
    dim = state["dim"]
    try:
        old = store.manifest() or {}
    except IntegrityError:
        if not rebuild:
            raise
        old = {}  # a damaged manifest: everything is rebuilt from the parts
    old_checksums = old.get(integrity.CHECKSUMS_KEY) or {}
    versions = store.read_versions()
    live = resolve_live(versions, store.removed_ids())
    old_live = None if rebuild else _read_old_ids(store, old)

    # FAISS parameters: kept from the last build (the trained quantizer with them) unless asked or the type changed
    if old.get("spec") and not rebuild and old["spec"]["index_type"] == cfg.index_type:
        spec = IndexSpec.from_dict(old["spec"])
        trained_file = old.get("trained")
    else:
        spec = faiss_index.resolve_spec(cfg, dim, len(live))
        trained_file = None
        old = {**old, "shards": []}  # nothing of the old layout is reused
    template = None
    fresh: set[str] = set()  # files written by this finalize: their checksums are computed anew
    if spec.needs_training:
        if trained_file and (store.shards_dir / trained_file).exists() and not _damaged(store, f"{SHARDS_DIR}/{trained_file}", old_checksums):
            template = faiss_index.read(store.shards_dir / trained_file, spec, mmap=False)
        else:
            template = faiss_index.train(spec, _sample_vectors(store, live, cfg.train_size, seed, dim), seed, cfg.use_gpu)
            trained_file = f"trained-{_short_hash(json.dumps(spec.to_dict(), sort_keys=True), str(seed), str(len(live)))}.faiss"
            store.shards_dir.mkdir(parents=True, exist_ok=True)
            faiss_index.write(template, store.shards_dir / trained_file)
            fresh.add(f"{SHARDS_DIR}/{trained_file}")

    part_rows = _part_rows(versions)
    layout = _shard_layout(old.get("shards", []), part_rows, cfg.shard_size)
    old_by_range = {(s["first_part"], s["last_part"]): s for s in old.get("shards", [])}
    shards, rebuilt = [], 0
    store.shards_dir.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=len(layout), desc="shards", unit="shard", disable=None if progress is None else not progress or len(layout) < 2, file=sys.stderr)
    with bar:
        for i, (first, last) in enumerate(layout):
            in_range = (live.part >= first) & (live.part <= last)
            ids = live.faiss_id[in_range]
            digest = ids_digest(ids)
            name = f"shard-{i:04d}-{_short_hash(digest, json.dumps(spec.to_dict(), sort_keys=True), trained_file or '')}.faiss"
            path = store.shards_dir / name
            previous = old_by_range.get((first, last))
            # rewritten (atomically, over the old file) when asked, or when it no longer matches its checksum
            force = rebuild or (path.exists() and _damaged(store, f"{SHARDS_DIR}/{name}", old_checksums))
            if force or not path.exists():
                rebuilt += 1
                fresh.add(f"{SHARDS_DIR}/{name}")
                if (
                    not force and previous is not None and spec.supports_remove and old_live is not None
                    and (store.shards_dir / previous["file"]).exists() and not _damaged(store, f"{SHARDS_DIR}/{previous['file']}", old_checksums)
                ):  # fmt: skip
                    before = old_live.faiss_id[(old_live.part >= first) & (old_live.part <= last)]
                    gone = np.setdiff1d(before, ids)
                    if ids_digest(before) == previous["digest"] and len(np.setdiff1d(ids, before)) == 0:
                        index = faiss_index.read(store.shards_dir / previous["file"], spec, mmap=False)
                        faiss_index.remove(index, gone)
                        faiss_index.write(index, path)
                        shards.append(_shard_entry(name, first, last, ids, digest))
                        bar.update(1)
                        continue
                vectors = _vectors_of(store, live, in_range, dim)
                faiss_index.write(faiss_index.fill(template, vectors, ids, spec), path)
            shards.append(_shard_entry(name, first, last, ids, digest))
            bar.update(1)

    ids_file = f"ids-{ids_digest(live.faiss_id)[:16]}.parquet"
    atomic_write_table(store.dir / ids_file, live.to_table())
    live_digest = ids_digest(live.faiss_id)
    bm25_digest = None
    saved_bm25 = BM25Index.saved_digest(store.dir / BM25_DIR)
    if (cfg.bm25 or saved_bm25 is not None) and len(live):  # BM25 state once written is kept current (a stale one helps no reader)
        bm25_damaged = any(integrity.check(store.dir, {n: e for n, e in old_checksums.items() if n.startswith(BM25_DIR + "/")}, hash_limit=None))
        if rebuild or bm25_damaged or saved_bm25 != live_digest:
            BM25Index.build(read_texts(store, live), cfg, live_digest).save(store.dir / BM25_DIR)
        bm25_digest = live_digest

    manifest = {
        "format": FORMAT,
        "model_fingerprint": state["model_fingerprint"],
        "model_dir": MODEL_DIR if (store.dir / MODEL_DIR).exists() else state.get("model_dir"),
        "dim": dim,
        "metric": METRIC,
        "kind": state["kind"],
        "count": len(live),
        "versions_committed": versions.num_rows,
        "removed": int(store.removed().num_rows),
        "parts": len(part_rows),
        "index_type": spec.index_type,
        "spec": spec.to_dict(),
        "trained": trained_file,
        "shards": shards,
        "ids_file": ids_file,
        "live_digest": live_digest,
        "bm25": {"dir": BM25_DIR, "digest": bm25_digest, "k1": cfg.bm25_k1, "b": cfg.bm25_b, "stopwords": cfg.stopwords, "stemmer": cfg.stemmer}
        if bm25_digest
        else None,
        "late": _late_summary(store, live),
        "parse_config": parse_config or old.get("parse_config"),
        "sources": [*old.get("sources", []), *([source] if source else [])],
        "config": dataclasses.asdict(cfg),
        "seed": seed,
        "library_versions": _versions(),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "finalize_seconds": round(time.time() - started, 2),
    }
    reuse = {n: e for n, e in old_checksums.items() if n.startswith((f"{PARTS_DIR}/", f"{SHARDS_DIR}/", "late/")) and n not in fresh}  # immutable, named by content
    manifest[integrity.CHECKSUMS_KEY] = integrity.record(store.dir, store.manifest_files(manifest), reuse=reuse)
    store.write_manifest(manifest)
    _delete_unreferenced(store, manifest)
    return manifest, rebuilt


def repair_index(out_dir: str | Path, progress: bool | None = None) -> dict:
    """Rebuild an index's derived files (id map, shards, BM25, manifest) from its stored documents."""
    store = IndexStore(out_dir)
    if store.state() is None:
        raise FileNotFoundError(f"{store.dir} is not an index directory: state.json is missing (build it with `graphtx index --model ... --graphs ... --out {store.dir}`)")
    try:
        manifest = store.manifest() or {}
    except IntegrityError:
        manifest = {}
    cfg = index_config_of(manifest) if manifest else IndexConfig()
    with IndexLock(store.dir):
        store.clean_partial_files()
        manifest, _ = finalize(store, cfg, seed=manifest.get("seed", 0), rebuild=True, progress=progress)
    return manifest


def verify_index(out_dir: str | Path) -> dict:
    """Hash every file an index's manifest names (shards and document parts included); raises IntegrityError on damage.

    Returns {"files": n, "bytes": total} of what was checked.
    """
    from graphtx.model.io import verify_model_dir

    store = IndexStore(out_dir)
    manifest = store.require_manifest()
    entries = manifest.get(integrity.CHECKSUMS_KEY)
    if entries is None:
        raise IntegrityError(f"index {store.dir} records no checksums (built before graphtx kept them): rebuild it with `graphtx index --out {store.dir} --rebuild` to add them")
    store.verify(manifest, full=True)
    if manifest.get("model_dir") == MODEL_DIR and (store.dir / MODEL_DIR).is_dir():
        verify_model_dir(store.dir / MODEL_DIR, mend=f"Copy the model in again: rebuild with `graphtx index --model MODEL --graphs GRAPHS --out {store.dir}`.")
    return {"files": len(entries), "bytes": sum(e["size"] for e in entries.values())}


def _damaged(store: IndexStore, name: str, checksums: dict) -> bool:
    """True when ``name`` has a recorded checksum that its file no longer matches."""
    return name in checksums and bool(integrity.check(store.dir, {name: checksums[name]}, hash_limit=None))


# --- helpers ---------------------------------------------------------------------------


def index_config_of(manifest: dict) -> IndexConfig:
    """The IndexConfig an index was built with (fields this graphtx does not know are ignored)."""
    built = manifest.get("config") or {}
    known = IndexConfig.__dataclass_fields__
    return IndexConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in built.items() if k in known})


def _device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def _float32():
    import torch

    return torch.float32


def existing_index_model(out_dir: str | Path) -> tuple[Path | None, str | None]:
    """(model directory, graph kind) of an index at ``out_dir``; (None, None) when there is no index there yet.

    The model is the copy inside the index (``INDEX/model``), else the directory the manifest or an
    unfinished build's state names: ``graphtx index --graphs G --out INDEX`` needs no ``--model`` to add.
    """
    store = IndexStore(out_dir)
    if not store.dir.is_dir():
        return None, None
    record = store.manifest() or store.state() or {}
    if not record:
        return None, None
    places = [store.dir / MODEL_DIR]
    if record.get("model_dir"):
        named = Path(record["model_dir"])
        places.append(named if named.is_absolute() else store.dir / named)
    found = next((p for p in places if (p / "fingerprint.txt").is_file()), None)
    return found, record.get("kind")


def _open_state(store: IndexStore, fp: str, dim: int, kind: str, model_dir, legacy_fp: str | None = None) -> dict:
    """The build state of ``store``, created for a new index; refuses another model or graph kind.

    ``legacy_fp``: the model's fingerprint without its tokenizer, which indexes built before the
    tokenizer was fingerprinted record.
    """
    state = store.state()
    if state is None:
        manifest = store.manifest()
        if manifest is not None:  # an index whose state file was lost: the manifest says the same
            state = {"format": FORMAT, "model_fingerprint": manifest["model_fingerprint"], "dim": manifest["dim"], "kind": manifest["kind"], "run": None}
        elif store.part_numbers():
            raise ValueError(f"{store.dir} holds document parts but no state.json or manifest.json: not an index graphtx can continue")
        else:
            return {"format": FORMAT, "model_fingerprint": fp, "dim": dim, "kind": kind, "model_dir": str(Path(model_dir).resolve()), "run": None}
    if state["model_fingerprint"] not in (fp, legacy_fp):
        raise ValueError(
            f"index {store.dir} holds vectors of model {state['model_fingerprint'][:12]}…, but {model_dir} is model {fp[:12]}…: "
            "vectors of two models cannot share an index: leave out --model (the index's own model is used), or write to a new --out"
        )
    if state["kind"] != kind:
        raise ValueError(f"index {store.dir} holds {state['kind']} graphs; index.kind is {kind} (use a new --out for another kind)")
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


def _read_old_ids(store: IndexStore, old: dict) -> IdMap | None:
    name = old.get("ids_file")
    if not name or not (store.dir / name).exists():
        return None
    import pyarrow.parquet as pq

    return IdMap.from_table(pq.read_table(store.dir / name))


def _part_rows(versions: pa.Table) -> dict[int, int]:
    """Part number → rows (all versions, live or not), in part order."""
    if versions.num_rows == 0:
        return {}
    parts, counts = np.unique(versions.column("part").to_numpy(), return_counts=True)
    return {int(p): int(c) for p, c in zip(parts, counts)}


def _shard_layout(old_shards: list[dict], part_rows: dict[int, int], shard_size: int) -> list[tuple[int, int]]:
    """(first part, last part) of each shard: old shards keep their parts; new parts fill the last shard, then new ones."""
    layout = [(s["first_part"], s["last_part"]) for s in old_shards]
    covered = layout[-1][1] if layout else -1
    rows_of = lambda first, last: sum(n for p, n in part_rows.items() if first <= p <= last)  # noqa: E731
    for p in sorted(q for q in part_rows if q > covered):
        if layout and rows_of(layout[-1][0], layout[-1][1]) + part_rows[p] <= shard_size:
            layout[-1] = (layout[-1][0], p)
        else:
            layout.append((p, p))
    return layout


def _shard_entry(name: str, first: int, last: int, ids: np.ndarray, digest: str) -> dict:
    return {"file": name, "first_part": first, "last_part": last, "count": int(len(ids)), "digest": digest}


def _vectors_of(store: IndexStore, live: IdMap, mask: np.ndarray, dim: int) -> np.ndarray:
    """Vectors (m, dim) of the live rows selected by ``mask``, in FAISS id order."""
    parts, rows = live.part[mask], live.row[mask]
    out = np.empty((len(parts), dim), np.float32)
    at = 0
    for seq in np.unique(parts):  # ascending, as FAISS ids are
        sel = rows[parts == seq]
        table = store.read_part_columns(int(seq), ["vector"])
        flat = table.column("vector").combine_chunks().flatten().to_numpy()
        out[at : at + len(sel)] = flat.reshape(-1, dim)[sel]
        at += len(sel)
    return out


def _sample_vectors(store: IndexStore, live: IdMap, size: int, seed: int, dim: int) -> np.ndarray:
    """A seeded sample of up to ``size`` live vectors (training IVF-PQ)."""
    rng = np.random.default_rng(seed)
    n = len(live)
    mask = np.zeros(n, bool)
    mask[rng.choice(n, size=min(size, n), replace=False)] = True
    return _vectors_of(store, live, mask, dim)


def read_texts(store: IndexStore, live: IdMap) -> list[str]:
    """BM25 texts of the live documents, in id-map order."""
    texts: list[str] = []
    for seq in np.unique(live.part):
        sel = live.row[live.part == seq]
        column = store.read_part_columns(int(seq), ["text"]).column("text").to_pylist()
        texts.extend(column[r] or "" for r in sel)
    # parts ascend with FAISS ids, and rows within a part too, so this is id-map order
    return texts


def _late_summary(store: IndexStore, live: IdMap) -> dict | None:
    """What the late-interaction node vectors of the live documents hold and weigh (None: none stored)."""
    folders = sorted((store.dir / late_store.LATE_DIR).glob("part-*[0-9]"))
    if not folders or not len(live):
        return None
    sample = np.load(folders[0] / "vectors.npy", mmap_mode="r")
    storage = "fp16" if sample.dtype == np.float16 else "int8"
    counts = late_store.NodeVectorStore(store.dir).node_counts(list(zip(live.part.tolist(), live.row.tolist())))
    per_node = late_store.bytes_per_node(int(sample.shape[1]), storage)
    bytes_per_doc = float(counts.mean()) * per_node + 8  # + its int64 offset
    return {"dir": late_store.LATE_DIR, "dim": int(sample.shape[1]), "storage": storage, "nodes": int(counts.sum()),
            "mean_nodes_per_doc": round(float(counts.mean()), 2), "bytes_per_node": per_node,
            "bytes_per_doc": round(bytes_per_doc, 1), "gb_per_million_docs": round(bytes_per_doc * 1e6 / 1e9, 3)}  # fmt: skip


def _delete_unreferenced(store: IndexStore, manifest: dict) -> None:
    keep = {s["file"] for s in manifest["shards"]} | ({manifest["trained"]} if manifest["trained"] else set())
    if store.shards_dir.is_dir():
        for p in store.shards_dir.glob("*.faiss"):
            if p.name not in keep:
                p.unlink()
    for p in store.dir.glob("ids-*.parquet"):
        if p.name != manifest["ids_file"]:
            p.unlink()


def _short_hash(*parts: str) -> str:
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]


def _versions() -> dict:
    import pyarrow
    import torch

    from importlib.metadata import PackageNotFoundError, version

    try:
        graphtx_version = version("graphtx")
    except PackageNotFoundError:
        graphtx_version = "unknown"
    out = {"graphtx": graphtx_version, "python": platform.python_version(), "torch": torch.__version__, "pyarrow": pyarrow.__version__}
    out.update(faiss_index.versions())
    try:
        import bm25s

        out["bm25s"] = bm25s.__version__
    except ImportError:
        pass
    return out
