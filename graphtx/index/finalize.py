"""Finalize an index directory: from its committed parts, the files a reader opens, manifest last.

From the document parts and removals (``store.py``): the live id map, one FAISS index per shard
(a run of parts up to ``index.shard_size`` documents), the BM25 index, and last the manifest,
written atomically with the size and sha256 of every file it names. Files are named by what they
hold, so a killed finalize leaves the previous manifest and its files intact, and only shards
whose documents changed are rebuilt (a removal from a flat or IVF-PQ shard is done in place).

``finalize`` is called by every writer (``build.py``); ``repair_index`` rebuilds the derived files
of a damaged index from its parts; ``verify_index`` hashes every file a manifest names.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from graphtx import integrity
from graphtx.errors import IntegrityError
from graphtx.index import faiss_index
from graphtx.index import late as late_store
from graphtx.index.config import IndexConfig
from graphtx.index.faiss_index import METRIC, IndexSpec
from graphtx.index.hybrid import BM25Index
from graphtx.index.idmap import IdMap, ids_digest, resolve_live
from graphtx.index.store import (
    BM25_DIR,
    FORMAT,
    IDS_GLOB,
    MODEL_DIR,
    PARTS_DIR,
    SHARDS_DIR,
    STATE_FILE,
    IndexStore,
    atomic_write_table,
    content_key,
    ids_file_name,
    index_config_of,
    shard_file_name,
    trained_file_name,
)
from graphtx.lock import IndexLock
from graphtx.progress import progress_bar


def finalize(
    store: IndexStore,
    cfg: IndexConfig,
    *,
    seed: int = 0,
    rebuild: bool = False,
    source: dict | None = None,
    parse_config: dict | None = None,
    progress: bool | None = None,
    fill_shards=None,
) -> tuple[dict, int]:
    """Id map, shards, BM25 and manifest from the committed parts; returns (manifest, shards rebuilt).

    ``fill_shards``: writes the shard files, ``fill_shards_here`` (default) or ``graphtx.index.sharded``'s Ray tasks."""
    started = time.time()
    state = store.state()
    if state is None:
        raise FileNotFoundError(
            f"{store.dir} has no {store.dir / STATE_FILE}: not an index directory written by graphtx index"
        )
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
    old_live = None if rebuild else store.read_id_map_if_present(old)

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
        if (
            trained_file
            and (store.shards_dir / trained_file).exists()
            and not _damaged(store, f"{SHARDS_DIR}/{trained_file}", old_checksums)
        ):
            template = faiss_index.read(store.shards_dir / trained_file, spec, mmap=False)
        else:
            template = faiss_index.train(
                spec, _sample_vectors(store, live, cfg.train_size, seed, dim), seed, cfg.use_gpu
            )
            trained_file = trained_file_name(
                content_key(json.dumps(spec.to_dict(), sort_keys=True), str(seed), str(len(live)))
            )
            store.shards_dir.mkdir(parents=True, exist_ok=True)
            faiss_index.write(template, store.shards_dir / trained_file)
            fresh.add(f"{SHARDS_DIR}/{trained_file}")

    part_rows = _part_rows(versions)
    layout = _shard_layout(old.get("shards", []), part_rows, cfg.shard_size)
    old_by_range = {(s["first_part"], s["last_part"]): s for s in old.get("shards", [])}
    shards, rebuilt = [], 0
    to_fill: list[tuple[Path, int, int]] = []  # (shard file, first part, last part) of the shards to write
    store.shards_dir.mkdir(parents=True, exist_ok=True)
    bar = progress_bar(
        total=len(layout),
        desc="shards",
        unit="shard",
        enabled=None if progress is None else progress and len(layout) > 1,
    )
    with bar:
        for i, (first, last) in enumerate(layout):
            in_range = (live.part >= first) & (live.part <= last)
            ids = live.faiss_id[in_range]
            digest = ids_digest(ids)
            name = shard_file_name(
                i, content_key(digest, json.dumps(spec.to_dict(), sort_keys=True), trained_file or "")
            )
            path = store.shards_dir / name
            previous = old_by_range.get((first, last))
            # rewritten (atomically, over the old file) when asked, or when it no longer matches its checksum
            force = rebuild or (path.exists() and _damaged(store, f"{SHARDS_DIR}/{name}", old_checksums))
            if force or not path.exists():
                rebuilt += 1
                fresh.add(f"{SHARDS_DIR}/{name}")
                if (
                    not force
                    and previous is not None
                    and spec.supports_remove
                    and old_live is not None
                    and not previous.get("ivfdata")
                    and (store.shards_dir / previous["file"]).exists()
                    and not _damaged(store, f"{SHARDS_DIR}/{previous['file']}", old_checksums)
                ):
                    before = old_live.faiss_id[(old_live.part >= first) & (old_live.part <= last)]
                    gone = np.setdiff1d(before, ids)
                    if ids_digest(before) == previous["digest"] and len(np.setdiff1d(ids, before)) == 0:
                        index = faiss_index.read(store.shards_dir / previous["file"], spec, mmap=False)
                        faiss_index.remove(index, gone)
                        faiss_index.write(index, path)
                        shards.append(_shard_entry(name, first, last, ids, digest))
                        bar.update(1)
                        continue
                to_fill.append((path, first, last))
                previous = None  # written anew, as a plain shard
            kept = (
                previous is not None and previous["file"] == name and "ivfdata" in previous
            )  # a merged shard (index/sharded.py), unchanged
            shards.append(
                _shard_entry(name, first, last, ids, digest) | ({"ivfdata": previous["ivfdata"]} if kept else {})
            )
            bar.update(1)
    (fill_shards or fill_shards_here)(store, live, to_fill, template, spec)  # graphtx.index.sharded: as Ray tasks

    live_digest = ids_digest(live.faiss_id)
    ids_file = ids_file_name(live_digest)
    atomic_write_table(store.dir / ids_file, live.to_table())
    bm25_digest = None
    saved_bm25 = BM25Index.saved_digest(store.dir / BM25_DIR)
    if (cfg.bm25 or saved_bm25 is not None) and len(
        live
    ):  # BM25 state once written is kept current (a stale one helps no reader)
        bm25_damaged = any(
            integrity.check(
                store.dir, {n: e for n, e in old_checksums.items() if n.startswith(BM25_DIR + "/")}, hash_limit=None
            )
        )
        if rebuild or bm25_damaged or saved_bm25 != live_digest:
            BM25Index.build(store.read_texts(live), cfg, live_digest).save(store.dir / BM25_DIR)
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
        "bm25": {
            "dir": BM25_DIR,
            "digest": bm25_digest,
            "k1": cfg.bm25_k1,
            "b": cfg.bm25_b,
            "stopwords": cfg.stopwords,
            "stemmer": cfg.stemmer,
        }
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
    merged = old.get("merged_ondisk")
    if merged and [(s["file"], s.get("ivfdata")) for s in shards] == [(merged.get("file"), merged.get("ivfdata"))]:
        manifest["merged_ondisk"] = (
            merged  # the merged shard kept as it was (a rerun found nothing to do): still merged
        )
    reuse = {
        n: e
        for n, e in old_checksums.items()
        if n.startswith((f"{PARTS_DIR}/", f"{SHARDS_DIR}/", f"{late_store.LATE_DIR}/")) and n not in fresh
    }  # immutable, named by content
    manifest[integrity.CHECKSUMS_KEY] = integrity.record(store.dir, store.manifest_files(manifest), reuse=reuse)
    store.write_manifest(manifest)
    _delete_unreferenced(store, manifest)
    return manifest, rebuilt


def fill_shards_here(
    store: IndexStore, live: IdMap, jobs: list[tuple[Path, int, int]], template, spec: IndexSpec
) -> None:
    """Write each ``(shard file, first part, last part)``: the live vectors of those parts added to the trained template."""
    for path, first, last in jobs:
        mask = (live.part >= first) & (live.part <= last)
        faiss_index.write(
            faiss_index.fill(template, store.read_vectors(live, mask, spec.dim), live.faiss_id[mask], spec), path
        )


def repair_index(out_dir: str | Path, progress: bool | None = None) -> dict:
    """Rebuild an index's derived files (id map, shards, BM25, manifest) from its stored documents."""
    store = IndexStore(out_dir)
    if store.state() is None:
        raise FileNotFoundError(
            f"{store.dir} is not an index directory: {STATE_FILE} is missing (build it with `graphtx index --model ... --graphs ... --out {store.dir}`)"
        )
    try:
        manifest = store.manifest() or {}
    except IntegrityError:
        manifest = {}
    cfg = index_config_of(manifest) if manifest else IndexConfig()
    store.checksums = manifest.get(integrity.CHECKSUMS_KEY) or {}
    with IndexLock(store.dir):
        store.clean_partial_files()
        for (
            seq
        ) in store.part_numbers():  # the parts rebuilt from, hashed first: a damaged one is named, not a reader's error
            store.check_part(seq)
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
        raise IntegrityError(
            f"index {store.dir} records no checksums (built before graphtx kept them): rebuild it with `graphtx index --out {store.dir} --rebuild` to add them"
        )
    store.verify(manifest, full=True)
    if manifest.get("model_dir") == MODEL_DIR and (store.dir / MODEL_DIR).is_dir():
        verify_model_dir(
            store.dir / MODEL_DIR,
            mend=f"Copy the model in again: rebuild with `graphtx index --model MODEL --graphs GRAPHS --out {store.dir}`.",
        )
    return {"files": len(entries), "bytes": sum(e["size"] for e in entries.values())}


def _damaged(store: IndexStore, name: str, checksums: dict) -> bool:
    """True when ``name`` has a recorded checksum that its file no longer matches."""
    return name in checksums and bool(integrity.check(store.dir, {name: checksums[name]}, hash_limit=None))


# --- helpers ---------------------------------------------------------------------------


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


def _sample_vectors(store: IndexStore, live: IdMap, size: int, seed: int, dim: int) -> np.ndarray:
    """A seeded sample of up to ``size`` live vectors (training IVF-PQ)."""
    rng = np.random.default_rng(seed)
    n = len(live)
    mask = np.zeros(n, bool)
    mask[rng.choice(n, size=min(size, n), replace=False)] = True
    return store.read_vectors(live, mask, dim)


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
    return {
        "dir": late_store.LATE_DIR,
        "dim": int(sample.shape[1]),
        "storage": storage,
        "nodes": int(counts.sum()),
        "mean_nodes_per_doc": round(float(counts.mean()), 2),
        "bytes_per_node": per_node,
        "bytes_per_doc": round(bytes_per_doc, 1),
        "gb_per_million_docs": round(bytes_per_doc * 1e6 / 1e9, 3),
    }


def _delete_unreferenced(store: IndexStore, manifest: dict) -> None:
    keep = {s["file"] for s in manifest["shards"]} | ({manifest["trained"]} if manifest["trained"] else set())
    keep |= {s["ivfdata"] for s in manifest["shards"] if s.get("ivfdata")}
    if store.shards_dir.is_dir():
        for p in [*store.shards_dir.glob("*.faiss"), *store.shards_dir.glob("*.ivfdata")]:
            if p.name not in keep:
                p.unlink()
    for p in store.dir.glob(IDS_GLOB):
        if p.name != manifest["ids_file"]:
            p.unlink()


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    import pyarrow
    import torch

    try:
        graphtx_version = version("graphtx")
    except PackageNotFoundError:
        graphtx_version = "unknown"
    out = {
        "graphtx": graphtx_version,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "pyarrow": pyarrow.__version__,
    }
    out.update(faiss_index.versions())
    try:
        import bm25s

        out["bm25s"] = bm25s.__version__
    except ImportError:
        pass
    return out
