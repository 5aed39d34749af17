"""The index directory: manifest, committed document parts, the live id map, removals.

Layout (plain files a person can inspect)::

    manifest.json                 what the index holds: model fingerprint, dim, metric, graph kind,
                                  count, FAISS type and parameters, shards, versions, build time, and the
                                  size + sha256 of every file it names (``checksums``, sealed by
                                  ``manifest_sha256``); written last and atomically, so a reader never
                                  sees a half-built index, and reads only the files it names
    .lock                         held (flock) by the process writing the index; holds its PID
    state.json                    build state: model fingerprint, dim, kind, and the run in progress
    documents/part-000000.parquet committed chunks (PART_SCHEMA), immutable: FAISS id, doc id, vector,
                                  metadata, BM25 text and the document's graph
    removed.parquet               FAISS ids taken out by ``remove_documents``
    ids.parquet                   the live id map: faiss_id (int64) <-> doc_id, with part and row
    shards/shard-0000-*.faiss     one FAISS index per run of parts; all shards are searched as one
    shards/trained-*.faiss        the trained, empty IVF-PQ index every shard starts from
    bm25/                         BM25 index over the live documents' text, in ids.parquet order
    model/                        a copy of the model directory (``index.copy_model``)

Ids: every committed document version gets the next FAISS id (int64, never reused). A doc id
is *live* in its latest version (highest FAISS id), unless that version was removed; so
replacing a document is adding a new version, and a part committed twice is impossible
(the part file appears by an atomic rename, or not at all).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from graphtx import integrity
from graphtx.atomic import atomic_write_table, atomic_write_text, fsync_dir  # noqa: F401 - used here and by build.py
from graphtx.errors import IntegrityError
from graphtx.graphs.graph import GRAPH_SCHEMA, InventionGraph

FORMAT = "graphtx-index/1"
MANIFEST_FILE, STATE_FILE = "manifest.json", "state.json"
IDS_FILE, REMOVED_FILE = "ids.parquet", "removed.parquet"
PARTS_DIR, SHARDS_DIR, BM25_DIR, MODEL_DIR = "documents", "shards", "bm25", "model"
_PART_NAME = re.compile(r"^part-(\d{6,})\.parquet$")

GRAPH_FIELDS = tuple(f.name for f in GRAPH_SCHEMA if f.name not in ("doc_id", "kind"))  # stored per part row
META_FIELDS = ("title", "date", "ipc", "cpc")
# what a hit shows beyond META_FIELDS (copied from the corpus where it has them; parts written before
# these columns lack them and read as empty values)
DISPLAY_FIELDS = ("abstract", "first_claim", "applicants", "priority_date", "application_date", "family_id", "kind", "country", "lang")
LIST_FIELDS = ("ipc", "cpc", "applicants")

# files hashed whenever an index is opened, whatever their size (sizes of all files are always checked;
# document parts and shards over integrity.HASH_AT_OPEN_BYTES are hashed by `graphtx index --verify`)
_SMALL = re.compile(r"^(ids-[0-9a-f]+\.parquet|removed\.parquet|shards/trained-.*|model/(checksums\.json|fingerprint\.txt|config\.yaml))$")
_DERIVED = re.compile(r"^(ids-[0-9a-f]+\.parquet|shards/.*|bm25/.*)$")  # rebuilt from the parts by `graphtx index --rebuild`


def index_mend(directory: Path, names: list[str]) -> str:
    """What to do about damaged files of an index: derived ones are rebuilt in place, sources need a new build."""
    if names and all(_DERIVED.match(n) for n in names):
        return f"Repair it with `graphtx index --out {directory} --rebuild` (rebuilds id map, shards and BM25 from the stored documents)."
    return (
        f"Its stored documents are damaged: build the index again into a new directory "
        f"(`graphtx index --model MODEL --graphs GRAPHS --out NEW_DIR`), or restore {directory} from a copy."
    )


IDS_SCHEMA = pa.schema([("faiss_id", pa.int64()), ("doc_id", pa.string()), ("part", pa.int32()), ("row", pa.int32())])
REMOVED_SCHEMA = pa.schema([("faiss_id", pa.int64()), ("doc_id", pa.string())])


def part_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("faiss_id", pa.int64()),
            ("doc_id", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
            ("title", pa.string()),
            ("date", pa.string()),
            ("ipc", pa.list_(pa.string())),
            ("cpc", pa.list_(pa.string())),
            ("text", pa.string()),  # BM25 text
            *[(f, pa.list_(pa.string()) if f in LIST_FIELDS else pa.string()) for f in DISPLAY_FIELDS],
            *[f for f in GRAPH_SCHEMA if f.name in GRAPH_FIELDS],
        ]
    )


# --- small file helpers (the atomic writes live in graphtx/atomic.py) -------------


def read_json(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def write_json(path: Path, data: dict) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def ids_digest(faiss_ids: np.ndarray) -> str:
    """sha1 of a sorted int64 id array: says whether a shard or BM25 index is still current."""
    return hashlib.sha1(np.ascontiguousarray(faiss_ids, dtype=np.int64).tobytes()).hexdigest()


# --- the live id map ---------------------------------------------------------------


class DocumentNotFound(KeyError):
    """A document id that is not (or no longer) in the index; ``suggestions``: the closest indexed ids."""

    def __init__(self, message: str, suggestions: list[str] | tuple[str, ...] = ()):
        super().__init__(message)
        self.suggestions = list(suggestions)


@dataclass
class IdMap:
    """Live documents, sorted by FAISS id.

    faiss_id (n,) int64 ascending; doc_id list of n strings; part (n,) int32; row (n,) int32.
    """

    faiss_id: np.ndarray
    doc_id: list[str]
    part: np.ndarray
    row: np.ndarray

    def __post_init__(self) -> None:
        self._position = {d: i for i, d in enumerate(self.doc_id)}
        self._resolver = None  # graphtx.corpus.ids.IdResolver, built on the first id that is not exact

    def __len__(self) -> int:
        return len(self.doc_id)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._position

    def position_of(self, doc_id: str) -> int:
        try:
            return self._position[doc_id]
        except KeyError:
            raise DocumentNotFound(f"document {doc_id!r} is not in the index") from None

    def resolve(self, typed: str) -> str:
        """The indexed id a typed one names (``US8418590B2``, ``US 8,418,590 B2``, ``US-8418590`` -> ``US-8418590-B2``);
        DocumentNotFound with the closest ids when none (or several) match."""
        from graphtx.corpus.ids import IdResolver, not_found_message

        if typed in self._position:
            return typed
        if self._resolver is None:
            self._resolver = IdResolver(self.doc_id)
        found = self._resolver.resolve(typed)
        if len(found) == 1:
            return found[0]
        if found:
            raise DocumentNotFound(f"document {typed!r} names {len(found)} indexed publications ({', '.join(found[:5])}): give the kind code", found[:5])
        suggestions = self._resolver.suggest(typed)
        raise DocumentNotFound(not_found_message(typed, suggestions), suggestions)

    def positions_of_faiss(self, faiss_ids: np.ndarray) -> np.ndarray:
        """Positions of FAISS ids (any shape); -1 where an id is not live (or is FAISS's -1 padding)."""
        shape = np.shape(faiss_ids)
        if not len(self.faiss_id):
            return np.full(shape, -1, dtype=np.int64)
        flat = np.asarray(faiss_ids, dtype=np.int64).reshape(-1)
        pos = np.minimum(np.searchsorted(self.faiss_id, flat), len(self.faiss_id) - 1)
        return np.where(self.faiss_id[pos] == flat, pos, -1).reshape(shape)

    def to_table(self) -> pa.Table:
        return pa.table({"faiss_id": self.faiss_id, "doc_id": self.doc_id, "part": self.part, "row": self.row}, schema=IDS_SCHEMA)

    @classmethod
    def from_table(cls, table: pa.Table) -> IdMap:
        table = table.sort_by("faiss_id")
        return cls(
            table.column("faiss_id").to_numpy().astype(np.int64),
            table.column("doc_id").to_pylist(),
            table.column("part").to_numpy().astype(np.int32),
            table.column("row").to_numpy().astype(np.int32),
        )


def resolve_live(versions: pa.Table, removed: set[int]) -> IdMap:
    """From all committed versions (faiss_id, doc_id, part, row): each doc id's latest, unless removed."""
    if versions.num_rows == 0:
        return IdMap.from_table(IDS_SCHEMA.empty_table())
    latest = versions.group_by("doc_id").aggregate([("faiss_id", "max")]).column("faiss_id_max")
    keep = pc.is_in(versions.column("faiss_id"), value_set=latest)
    if removed:
        gone = pc.is_in(versions.column("faiss_id"), value_set=pa.array(sorted(removed), pa.int64()))
        keep = pc.and_(keep, pc.invert(gone))
    return IdMap.from_table(versions.filter(keep))


# --- the index directory -------------------------------------------------------------


class IndexStore:
    """Files of one index directory: parts, id map, removals, manifest and build state."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        self.parts_dir = self.dir / PARTS_DIR
        self.shards_dir = self.dir / SHARDS_DIR
        self._files: OrderedDict[int, pq.ParquetFile] = OrderedDict()  # open parts, least recently used first
        self._group_starts: dict[int, np.ndarray] = {}
        self.checksums: dict = {}  # the manifest's, set by a reader: each part is hashed when first read (lazily)
        self._checked_parts: set[int] = set()

    # --- manifest and state -------------------------------------------------------
    def manifest(self) -> dict | None:
        mend = f"Repair it with `graphtx index --out {self.dir} --rebuild` (the stored documents are kept), or restore it from a copy."
        return integrity.read_manifest(self.dir / MANIFEST_FILE, what="index", mend=mend)

    def require_manifest(self) -> dict:
        manifest = self.manifest()
        if manifest is None:
            hint = " (a build was started here but not finished: run the same `graphtx index` command again)" if (self.dir / STATE_FILE).exists() else ""
            raise FileNotFoundError(f"{self.dir} is not an index directory: {MANIFEST_FILE} is missing{hint}")
        if manifest.get("format") != FORMAT:
            raise ValueError(f"{self.dir}: unknown index format {manifest.get('format')!r} (this graphtx reads {FORMAT})")
        return manifest

    def write_manifest(self, manifest: dict) -> None:
        write_json(self.dir / MANIFEST_FILE, integrity.seal(manifest))

    # --- integrity ------------------------------------------------------------------
    def manifest_files(self, manifest: dict) -> list[str]:
        """Every file (relative name) a finished index's manifest names: what a reader may read."""
        names = [f"{SHARDS_DIR}/{s['file']}" for s in manifest["shards"]] + [manifest["ids_file"]]
        if manifest.get("trained"):
            names.append(f"{SHARDS_DIR}/{manifest['trained']}")
        names += [p.relative_to(self.dir).as_posix() for p in map(self.part_path, self.part_numbers())]
        if (self.dir / REMOVED_FILE).exists():
            names.append(REMOVED_FILE)
        if manifest.get("bm25"):
            names += integrity.files_under(self.dir, BM25_DIR)
        if manifest.get("late"):  # late-interaction node vectors, one folder a part (sizes checked at open, hashes by --verify)
            names += integrity.files_under(self.dir, manifest["late"].get("dir", "late"))
        if manifest.get("model_dir") == MODEL_DIR:
            names += [f"{MODEL_DIR}/{n}" for n in ("checksums.json", "fingerprint.txt", "config.yaml") if (self.dir / MODEL_DIR / n).exists()]
        return names

    def problems(self, manifest: dict, full: bool = False) -> list[integrity.Problem]:
        """Damaged files of the index: sizes of all and hashes of the small ones (``full``: hashes of all)."""
        entries = manifest.get(integrity.CHECKSUMS_KEY)
        if entries is None:  # an index written before checksums existed
            return []
        if full:
            return integrity.check(self.dir, entries, hash_limit=None)
        sized = integrity.check(self.dir, entries, hash_limit=-1)  # sizes only
        small = [n for n in entries if _SMALL.match(n) or (n.startswith(SHARDS_DIR + "/") and entries[n]["size"] <= integrity.HASH_AT_OPEN_BYTES)]
        bad = {p.name for p in sized}
        return sized + integrity.check(self.dir, entries, hash_limit=None, names=[n for n in small if n not in bad])

    def verify(self, manifest: dict, full: bool = False, skip: tuple[str, ...] = ()) -> None:
        """Raise IntegrityError naming every damaged file (``skip``: prefixes left out, e.g. a BM25 state rebuilt in memory)."""
        problems = [p for p in self.problems(manifest, full) if not p.name.startswith(skip)]
        if problems:
            raise integrity.damaged(self.dir, problems, what="index", mend=index_mend(self.dir, [p.name for p in problems]))

    def state(self) -> dict | None:
        return read_json(self.dir / STATE_FILE)

    def write_state(self, state: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        write_json(self.dir / STATE_FILE, state)

    # --- parts ----------------------------------------------------------------------
    def part_path(self, seq: int) -> Path:
        return self.parts_dir / f"part-{seq:06d}.parquet"

    def part_numbers(self) -> list[int]:
        if not self.parts_dir.is_dir():
            return []
        return sorted(int(m.group(1)) for p in self.parts_dir.iterdir() if (m := _PART_NAME.match(p.name)))

    def clean_partial_files(self) -> int:
        """Delete ``*.tmp`` files a killed run left behind; returns how many."""
        n = 0
        for folder in (self.dir, self.parts_dir, self.shards_dir, self.dir / BM25_DIR):
            if folder.is_dir():
                for p in folder.glob("*.tmp"):
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
                    n += 1
        return n

    def commit_part(self, seq: int, table: pa.Table, row_group_size: int) -> Path:
        """Write part ``seq`` atomically: after this returns it is there whole, before it is not there at all."""
        self.parts_dir.mkdir(parents=True, exist_ok=True)
        path = self.part_path(seq)
        if path.exists():
            raise FileExistsError(f"{path} exists already: parts are immutable")
        atomic_write_table(path, table, row_group_size=row_group_size)
        return path

    def read_versions(self) -> pa.Table:
        """Every committed document version: faiss_id, doc_id, part, row (IDS_SCHEMA)."""
        tables = []
        for seq in self.part_numbers():
            t = pq.read_table(self.part_path(seq), columns=["faiss_id", "doc_id"])
            tables.append(t.append_column("part", pa.array(np.full(t.num_rows, seq, np.int32))).append_column("row", pa.array(np.arange(t.num_rows, dtype=np.int32))))
        return pa.concat_tables(tables).cast(IDS_SCHEMA) if tables else IDS_SCHEMA.empty_table()

    def read_part_columns(self, seq: int, columns: list[str]) -> pa.Table:
        return pq.read_table(self.part_path(seq), columns=columns)

    # --- removals --------------------------------------------------------------------
    def removed(self) -> pa.Table:
        path = self.dir / REMOVED_FILE
        return pq.read_table(path).cast(REMOVED_SCHEMA) if path.exists() else REMOVED_SCHEMA.empty_table()

    def removed_ids(self) -> set[int]:
        return set(self.removed().column("faiss_id").to_pylist())

    def add_removed(self, faiss_ids: list[int], doc_ids: list[str]) -> None:
        new = pa.table({"faiss_id": pa.array(faiss_ids, pa.int64()), "doc_id": pa.array(doc_ids, pa.string())})
        atomic_write_table(self.dir / REMOVED_FILE, pa.concat_tables([self.removed(), new]))

    # --- the live id map ----------------------------------------------------------------
    def live(self) -> IdMap:
        """The live id map computed from the parts and removals (the truth ``ids.parquet`` is a copy of)."""
        return resolve_live(self.read_versions(), self.removed_ids())

    def write_ids(self, ids: IdMap) -> None:
        atomic_write_table(self.dir / IDS_FILE, ids.to_table())

    def read_ids(self) -> IdMap:
        path = self.dir / IDS_FILE
        if not path.exists():
            raise FileNotFoundError(f"{self.dir}: {IDS_FILE} is missing (run `graphtx index` again to finish the index)")
        return IdMap.from_table(pq.read_table(path))

    def read_id_map(self, name: str) -> IdMap:
        """The id map file a manifest names, checked: FAISS ids unique and ascending, every doc id once."""
        path = self.dir / name
        try:
            ids = IdMap.from_table(pq.read_table(path).cast(IDS_SCHEMA))
        except FileNotFoundError:
            raise
        except Exception as err:  # pyarrow's errors on a damaged file
            raise IntegrityError(f"index id map {path} cannot be read ({err}). {index_mend(self.dir, [name])}", [str(path)]) from None
        if len(set(ids.doc_id)) != len(ids) or (len(ids) > 1 and not np.all(np.diff(ids.faiss_id) > 0)):
            raise IntegrityError(f"index id map {path} is damaged (repeated ids). {index_mend(self.dir, [name])}", [str(path)])
        return ids

    # --- random access to rows -------------------------------------------------------------
    def check_part(self, seq: int) -> None:
        """Hash part ``seq`` against the manifest's checksum, once per store (a reader's lazy check)."""
        if seq in self._checked_parts:
            return
        name = self.part_path(seq).relative_to(self.dir).as_posix()
        if name in self.checksums:
            problems = integrity.check(self.dir, {name: self.checksums[name]}, hash_limit=None)
            if problems:
                raise integrity.damaged(self.dir, problems, what="index", mend=index_mend(self.dir, [name]))
        self._checked_parts.add(seq)

    def _file(self, seq: int) -> pq.ParquetFile:
        f = self._files.pop(seq, None)
        if f is None:
            self.check_part(seq)
            f = pq.ParquetFile(self.part_path(seq))
            meta = f.metadata
            sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
            self._group_starts[seq] = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._files[seq] = f
        while len(self._files) > 64:  # bound open file handles
            old, _ = self._files.popitem(last=False)
            self._group_starts.pop(old, None)
        return f

    def read_rows(self, locations: list[tuple[int, int]], columns: list[str]) -> list[dict[str, Any]]:
        """Rows at (part, row) locations, in the given order; each row group is read once.

        A column a part lacks (written before it existed) reads as None.
        """
        out: list[dict | None] = [None] * len(locations)
        wanted: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for i, (seq, row) in enumerate(locations):
            self._file(seq)  # opens the part (LRU) and caches its row-group starts
            starts = self._group_starts[seq]
            group = int(np.searchsorted(starts, row, side="right") - 1)
            wanted.setdefault((seq, group), []).append((i, row - int(starts[group])))
        for (seq, group), items in wanted.items():
            file = self._file(seq)
            present = set(file.schema_arrow.names)
            rows = file.read_row_group(group, columns=[c for c in columns if c in present]).to_pylist()
            absent = {c: None for c in columns if c not in present}
            for i, offset in items:
                out[i] = rows[offset] | absent if absent else rows[offset]
        return out  # type: ignore[return-value]


def row_to_graph(row: dict, doc_id: str, kind: str) -> InventionGraph:
    return InventionGraph.from_row({**{f: row[f] for f in GRAPH_FIELDS}, "doc_id": doc_id, "kind": kind})
