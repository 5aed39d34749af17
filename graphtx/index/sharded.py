"""Sharded FAISS build for ``graphtx index --engine ray``: shards filled as Ray tasks, IVF-PQ merged on disk.

FAISS's recipe for corpora beyond one machine (``faiss/contrib/ondisk.py``; the LAION indexes): train the
IVF-PQ quantiser once on a sample, add the shards in parallel, merge their inverted lists on disk.

* ``ray_filler(workers, address)`` is the ``fill_shards`` of ``graphtx.index.build.finalize``: the
  shards finalize decided to write (same layout, same names, same trained template as ``--engine
  local``) are filled by Ray tasks, each reading its own vectors from the index's document parts
  (the index directory must be on storage every node sees) and writing its shard file atomically.
  The index is then the local engine's, file for file.
* ``merge_ondisk(out_dir)`` (``graphtx index --engine ray --merge``, IVF-PQ without refine): the
  shards become one index, ``shard-0000-<hash>.faiss`` with its inverted lists in
  ``shard-0000-<hash>.ivfdata`` (memory-mapped when searched, so the index need not fit in RAM),
  recorded in the manifest as one shard covering every part (with its checksums, the id map and
  the fingerprint unchanged). ``graphtx search`` and the service read it as any index. A later
  build adds new shards beside it (merged in by the next ``--merge-ondisk``); a removal rewrites it
  as a plain shard.
"""

from __future__ import annotations

import json
import tempfile
from collections import deque
from pathlib import Path

import numpy as np

from graphtx import integrity
from graphtx.atomic import fsync_dir, fsync_path, signals_deferred
from graphtx.index import faiss_index
from graphtx.index.faiss_index import IndexSpec
from graphtx.index.idmap import IdMap, ids_digest
from graphtx.index.store import SHARDS_DIR, IndexStore, content_key, ivfdata_file_name, shard_file_name
from graphtx.lock import IndexLock


def _shard_vectors(store: IndexStore, parts: np.ndarray, rows: np.ndarray, dim: int) -> np.ndarray:
    """Vectors (m, dim) float32 of the document rows ``(parts[i], rows[i])``, parts ascending (FAISS id order)."""
    out = np.empty((len(parts), dim), np.float32)
    at = 0
    for seq in np.unique(parts):
        sel = rows[parts == seq]
        flat = store.read_part_columns(int(seq), ["vector"]).column("vector").combine_chunks().flatten().to_numpy()
        out[at : at + len(sel)] = flat.reshape(-1, dim)[sel]
        at += len(sel)
    return out


def fill_one(
    store_dir: str,
    path: str,
    parts: np.ndarray,
    rows: np.ndarray,
    ids: np.ndarray,
    template: np.ndarray | None,
    spec: dict,
) -> int:
    """One shard (a Ray task): the trained template (serialised, or None for flat/HNSW) filled with the vectors of
    ``(parts, rows)`` under ``ids``, written atomically to ``path``; returns the vectors added."""
    faiss = faiss_index._faiss()
    spec_ = IndexSpec.from_dict(spec)
    store = IndexStore(store_dir)
    vectors = _shard_vectors(store, parts, rows, spec_.dim)  # (m, dim)
    trained = faiss.deserialize_index(template) if template is not None else None
    faiss_index.write(faiss_index.fill(trained, vectors, ids, spec_), Path(path))
    return len(ids)


def ray_filler(workers: int, address: str | None = None, ahead: int = 2):
    """A ``fill_shards`` for ``finalize`` that writes the shards as Ray tasks, at most ``workers * ahead`` at a time."""

    def fill_shards(
        store: IndexStore, live: IdMap, jobs: list[tuple[Path, int, int]], template, spec: IndexSpec
    ) -> None:
        if not jobs:
            return
        from graphtx.ray_engine import ray_session

        with ray_session(address, num_cpus=max(1, workers)) as ray:
            task = ray.remote(num_cpus=1)(fill_one)
            trained = ray.put(faiss_index._faiss().serialize_index(template)) if template is not None else None
            pending: deque = deque()
            for path, first, last in jobs:
                mask = (live.part >= first) & (live.part <= last)
                pending.append(
                    task.remote(
                        str(store.dir.resolve()),
                        str(path),
                        live.part[mask],
                        live.row[mask],
                        live.faiss_id[mask],
                        trained,
                        spec.to_dict(),
                    )
                )
                if len(pending) >= max(1, workers) * ahead:
                    ray.get(pending.popleft())
            ray.get(list(pending))

    return fill_shards


# --- merge on disk ---------------------------------------------------------------------


def merge_ondisk(out_dir: str | Path) -> dict:
    """Merge an IVF-PQ index's shards into one on-disk index (see the module docstring); returns the new manifest.

    Refused (a clear error) for flat and HNSW indexes and for IVF-PQ with refine codes, whose shards stay as they are."""
    store = IndexStore(out_dir)
    with IndexLock(store.dir):
        return merge_locked(store)


def merge_locked(store: IndexStore) -> dict:
    """``merge_ondisk`` for a caller that holds the index's lock already (``graphtx index --merge``)."""
    faiss = faiss_index._faiss()
    manifest = store.require_manifest()
    _clear_merge_leftovers(store, manifest)
    spec = IndexSpec.from_dict(manifest["spec"])
    if spec.index_type != "ivfpq" or spec.refine:
        raise ValueError(
            f"index {store.dir} is {spec.factory}: only IVF-PQ shards without refine codes merge on disk (the shards stay as they are)"
        )
    shards = manifest["shards"]
    if not shards or (len(shards) == 1 and shards[0].get("ivfdata")):
        return manifest  # merged already (or nothing to merge)
    first, last = shards[0]["first_part"], shards[-1]["last_part"]
    digest = _ids_digest_of(store, first, last, manifest["live_digest"])
    # the name finalize gives one shard of these parts: a later build that leaves them alone keeps the merged index
    name = shard_file_name(
        0, content_key(digest, json.dumps(spec.to_dict(), sort_keys=True), manifest["trained"] or "")
    )
    data = ivfdata_file_name(name)
    template = faiss_index.read(store.shards_dir / manifest["trained"], spec, mmap=False)
    with tempfile.TemporaryDirectory(
        dir=store.shards_dir, prefix=".merge-"
    ) as tmp:  # the merged pair is renamed in whole
        _merge_into(template, [store.shards_dir / s["file"] for s in shards], Path(tmp) / data)
        faiss.write_index(template, str(Path(tmp) / name))
        del template  # closes the .ivfdata mapping before the rename
        fsync_path(tmp)
        with signals_deferred():
            (Path(tmp) / data).replace(store.shards_dir / data)
            (Path(tmp) / name).replace(store.shards_dir / name)
        fsync_dir(store.shards_dir)
    count = sum(s["count"] for s in shards)
    merged = {"file": name, "first_part": first, "last_part": last, "count": count, "digest": digest, "ivfdata": data}
    old_files = {f"{SHARDS_DIR}/{s['file']}" for s in shards} | {
        f"{SHARDS_DIR}/{s['ivfdata']}" for s in shards if s.get("ivfdata")
    }
    new = {**manifest, "shards": [merged], "merged_ondisk": {"shards": len(shards), "file": name, "ivfdata": data}}
    checksums = {n: e for n, e in manifest[integrity.CHECKSUMS_KEY].items() if n not in old_files}
    new[integrity.CHECKSUMS_KEY] = integrity.record(store.dir, store.manifest_files(new), reuse=checksums)
    store.write_manifest(new)
    for n in old_files - {f"{SHARDS_DIR}/{name}", f"{SHARDS_DIR}/{data}"}:
        (store.dir / n).unlink(missing_ok=True)
    return new


def _clear_merge_leftovers(store: IndexStore, manifest: dict) -> None:
    """What a merge killed part-way left in the shards folder (the caller holds the index's lock, so no writer is at
    work): its temporary folder, a merged pair renamed in before the manifest named it, and shards the manifest no
    longer names once it did (killed before their removal)."""
    import shutil

    if not store.shards_dir.is_dir():
        return
    named = {manifest.get("trained") or ""}
    for shard in manifest.get("shards", ()):
        named |= {shard["file"], shard.get("ivfdata") or ""}
    for entry in store.shards_dir.iterdir():
        if entry.name.startswith(".merge-") and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.suffix in (".faiss", ".ivfdata") and entry.name not in named:
            entry.unlink(missing_ok=True)


def _merge_into(template, shard_files: list[Path], ivfdata: Path) -> None:
    """``faiss.contrib.ondisk.merge_ondisk``, reading the shards with ``IO_FLAG_ONDISK_SAME_DIR`` too: a shard merged
    before (an earlier ``--merge-ondisk``) finds its ``.ivfdata`` beside it. The template (trained, empty) gets
    every shard's inverted lists, written to ``ivfdata``; the shards' lists are memory-mapped, not loaded."""
    faiss = faiss_index._faiss()
    shards, lists = [], []
    for path in shard_files:
        on_disk = (
            path.parent / ivfdata_file_name(path.name)
        ).exists()  # its lists are mapped from there already (IO_FLAG_MMAP on it crashed FAISS 1.15 here)
        flags = faiss.IO_FLAG_ONDISK_SAME_DIR if on_disk else faiss.IO_FLAG_MMAP
        shards.append(faiss.read_index(str(path), flags))  # kept alive until merged
        lists.append(faiss.extract_index_ivf(shards[-1]).invlists)
    ivf = faiss.extract_index_ivf(template)
    assert template.ntotal == 0, "the trained template must be empty"
    merged = faiss.OnDiskInvertedLists(ivf.nlist, ivf.code_size, str(ivfdata))
    vector = faiss.InvertedListsPtrVector()
    for invlists in lists:
        vector.push_back(invlists)
    ntotal = merged.merge_from_multiple(vector.data(), vector.size(), False)
    template.ntotal = ivf.ntotal = ntotal
    ivf.replace_invlists(merged, True)
    merged.this.disown()


def _ids_digest_of(store: IndexStore, first: int, last: int, live_digest: str) -> str:
    """The digest of the live ids in parts ``first .. last`` (all of them: the index's live digest)."""
    live = store.live()
    in_range = (live.part >= first) & (live.part <= last)
    return live_digest if in_range.all() else ids_digest(live.faiss_id[in_range])
