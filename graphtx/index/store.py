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
    ids-<digest>.parquet          the live id map: faiss_id (int64) <-> doc_id, with part and row; named by
                                  its ids' digest (``ids_file_name``), the manifest names the current one
    shards/shard-0000-*.faiss     one FAISS index per run of parts; all shards are searched as one
    shards/trained-*.faiss        the trained, empty IVF-PQ index every shard starts from
    bm25/                         BM25 index over the live documents' text, in id-map order
    model/                        a copy of the model directory (``index.copy_model``)

This module owns the names of these files and reading them back (the id map, parts, vectors,
BM25 texts, FAISS shards, the build config); ``build.py`` and ``finalize.py`` write them, ``search.py``
reads them through here only.

Ids: every committed document version gets the next FAISS id (int64, never reused). A doc id
is *live* in its latest version (highest FAISS id), unless that version was removed; so
replacing a document is adding a new version, and a part committed twice is impossible
(the part file appears by an atomic rename, or not at all).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from graphtx import integrity
from graphtx.atomic import atomic_write_table, atomic_write_text
from graphtx.errors import IntegrityError
from graphtx.from_dict import known_only
from graphtx.graphs.graph import GRAPH_SCHEMA, InventionGraph
from graphtx.index.config import IndexConfig
from graphtx.index.idmap import IDS_SCHEMA, IdMap, resolve_live

FORMAT = "graphtx-index/1"
MANIFEST_FILE, STATE_FILE = "manifest.json", "state.json"
REMOVED_FILE = "removed.parquet"
PARTS_DIR, SHARDS_DIR, BM25_DIR, MODEL_DIR = "documents", "shards", "bm25", "model"
IDS_GLOB = "ids-*.parquet"  # every id map file; the manifest's "ids_file" names the live one
_IDS_NAME = r"ids-[0-9a-f]+\.parquet"
_PART_NAME = re.compile(r"^part-(\d{6,})\.parquet$")


def ids_file_name(live_digest: str) -> str:
    """The id map's file name: named by its ids, so a new one never overwrites the one a reader has open."""
    return f"ids-{live_digest[:16]}.parquet"


def content_key(*parts: str) -> str:
    """A short hash of what a file holds (its ``parts``): shard and quantizer files are named by it."""
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]


def shard_file_name(i: int, key: str) -> str:
    """Shard ``i``'s FAISS file, named by what it holds (``key``: a hash of its ids, FAISS spec and quantizer)."""
    return f"shard-{i:04d}-{key}.faiss"


def ivfdata_file_name(shard_file: str) -> str:
    """The inverted lists of a merged IVF-PQ shard, beside it (``sharded.py``)."""
    return shard_file.removesuffix(".faiss") + ".ivfdata"


def trained_file_name(key: str) -> str:
    """The trained, empty IVF-PQ index every shard starts from (``key``: a hash of spec, seed and count)."""
    return f"trained-{key}.faiss"


GRAPH_FIELDS = tuple(f.name for f in GRAPH_SCHEMA if f.name not in ("doc_id", "kind"))  # stored per part row
META_FIELDS = ("title", "date", "ipc", "cpc")
# what a hit shows beyond META_FIELDS (copied from the corpus where it has them; parts written before
# these columns lack them and read as empty values)
DISPLAY_FIELDS = (
    "abstract",
    "first_claim",
    "applicants",
    "priority_date",
    "application_date",
    "family_id",
    "kind",
    "country",
    "lang",
)
LIST_FIELDS = ("ipc", "cpc", "applicants")
# the whole document, for its page and `graphtx show --index` (not read by searches): every claim, the description
# (cut at index.document_max_chars), the corpus's citations of it; parts written before them read as empty
DOCUMENT_FIELDS = ("claims", "description", "cites")
CLAIM_TYPE = pa.struct([("number", pa.int32()), ("text", pa.string()), ("independent", pa.bool_())])

# files hashed whenever an index is opened, whatever their size (sizes of all files are always checked;
# document parts and shards over integrity.HASH_AT_OPEN_BYTES are hashed by `graphtx index --verify`)
_SMALL = re.compile(
    rf"^({_IDS_NAME}|{re.escape(REMOVED_FILE)}|{SHARDS_DIR}/trained-.*|{MODEL_DIR}/(checksums\.json|fingerprint\.txt|config\.yaml))$"
)
_DERIVED = re.compile(
    rf"^({_IDS_NAME}|{SHARDS_DIR}/.*|{BM25_DIR}/.*)$"
)  # rebuilt from the parts by `graphtx index --rebuild`


def index_mend(directory: Path, names: list[str]) -> str:
    """What to do about damaged files of an index: derived ones are rebuilt in place, sources need a new build."""
    if names and all(_DERIVED.match(n) for n in names):
        return f"Repair it with `graphtx index --out {directory} --rebuild` (rebuilds id map, shards and BM25 from the stored documents)."
    return (
        f"Its stored documents are damaged: build the index again into a new directory "
        f"(`graphtx index --model MODEL --graphs GRAPHS --out NEW_DIR`), or restore {directory} from a copy."
    )


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
            ("claims", pa.list_(CLAIM_TYPE)),
            ("description", pa.string()),
            ("cites", pa.list_(pa.string())),  # ids the corpus says this document cites
            *[f for f in GRAPH_SCHEMA if f.name in GRAPH_FIELDS],
        ]
    )


# --- small file helpers (the atomic writes live in graphtx/atomic.py) -------------


def read_json(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def write_json(path: Path, data: dict) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


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
            hint = (
                " (a build was started here but not finished: run the same `graphtx index` command again)"
                if (self.dir / STATE_FILE).exists()
                else ""
            )
            raise FileNotFoundError(f"{self.dir} is not an index directory: {MANIFEST_FILE} is missing{hint}")
        if manifest.get("format") != FORMAT:
            raise ValueError(
                f"{self.dir}: unknown index format {manifest.get('format')!r} (this graphtx reads {FORMAT})"
            )
        return manifest

    def write_manifest(self, manifest: dict) -> None:
        write_json(self.dir / MANIFEST_FILE, integrity.seal(manifest))

    # --- integrity ------------------------------------------------------------------
    def manifest_files(self, manifest: dict) -> list[str]:
        """Every file (relative name) a finished index's manifest names: what a reader may read."""
        names = [f"{SHARDS_DIR}/{s['file']}" for s in manifest["shards"]] + [manifest["ids_file"]]
        names += [
            f"{SHARDS_DIR}/{s['ivfdata']}" for s in manifest["shards"] if s.get("ivfdata")
        ]  # a merged shard's on-disk lists
        if manifest.get("trained"):
            names.append(f"{SHARDS_DIR}/{manifest['trained']}")
        names += [p.relative_to(self.dir).as_posix() for p in map(self.part_path, self.part_numbers())]
        if (self.dir / REMOVED_FILE).exists():
            names.append(REMOVED_FILE)
        if manifest.get("bm25"):
            names += integrity.files_under(self.dir, BM25_DIR)
        if manifest.get(
            "late"
        ):  # late-interaction node vectors, one folder a part (sizes checked at open, hashes by --verify)
            names += integrity.files_under(self.dir, manifest["late"].get("dir", "late"))
        if manifest.get("model_dir") == MODEL_DIR:
            names += [
                f"{MODEL_DIR}/{n}"
                for n in ("checksums.json", "fingerprint.txt", "config.yaml")
                if (self.dir / MODEL_DIR / n).exists()
            ]
        return names

    def problems(self, manifest: dict, full: bool = False) -> list[integrity.Problem]:
        """Damaged files of the index: sizes of all and hashes of the small ones (``full``: hashes of all)."""
        entries = manifest.get(integrity.CHECKSUMS_KEY)
        if entries is None:  # an index written before checksums existed
            return []
        if full:
            return integrity.check(self.dir, entries, hash_limit=None)
        sized = integrity.check(self.dir, entries, hash_limit=-1)  # sizes only
        small = [
            n
            for n in entries
            if _SMALL.match(n)
            or (n.startswith(SHARDS_DIR + "/") and entries[n]["size"] <= integrity.HASH_AT_OPEN_BYTES)
        ]
        bad = {p.name for p in sized}
        return sized + integrity.check(self.dir, entries, hash_limit=None, names=[n for n in small if n not in bad])

    def verify(self, manifest: dict, full: bool = False, skip: tuple[str, ...] = ()) -> None:
        """Raise IntegrityError naming every damaged file (``skip``: prefixes left out, e.g. a BM25 state rebuilt in memory)."""
        problems = [p for p in self.problems(manifest, full) if not p.name.startswith(skip)]
        if problems:
            raise integrity.damaged(
                self.dir, problems, what="index", mend=index_mend(self.dir, [p.name for p in problems])
            )

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
            tables.append(
                t.append_column("part", pa.array(np.full(t.num_rows, seq, np.int32))).append_column(
                    "row", pa.array(np.arange(t.num_rows, dtype=np.int32))
                )
            )
        return pa.concat_tables(tables).cast(IDS_SCHEMA) if tables else IDS_SCHEMA.empty_table()

    def read_part_columns(self, seq: int, columns: list[str]) -> pa.Table:
        return pq.read_table(self.part_path(seq), columns=columns)

    def part_columns(self, seq: int) -> list[str]:
        """The columns part ``seq`` holds (parts written before a column existed lack it)."""
        return pq.ParquetFile(self.part_path(seq)).schema_arrow.names

    def read_vectors(self, live: IdMap, mask: np.ndarray, dim: int) -> np.ndarray:
        """Vectors (m, dim) of the live rows selected by ``mask`` (n,) bool, in FAISS id order."""
        parts, rows = live.part[mask], live.row[mask]
        out = np.empty((len(parts), dim), np.float32)
        at = 0
        for seq in np.unique(parts):  # ascending, as FAISS ids are
            sel = rows[parts == seq]
            table = self.read_part_columns(int(seq), ["vector"])
            flat = table.column("vector").combine_chunks().flatten().to_numpy()
            out[at : at + len(sel)] = flat.reshape(-1, dim)[sel]
            at += len(sel)
        return out

    def read_texts(self, live: IdMap) -> list[str]:
        """BM25 texts of the live documents, in id-map order."""
        texts: list[str] = []
        for seq in np.unique(live.part):
            sel = live.row[live.part == seq]
            column = self.read_part_columns(int(seq), ["text"]).column("text").to_pylist()
            texts.extend(column[r] or "" for r in sel)
        # parts ascend with FAISS ids, and rows within a part too, so this is id-map order
        return texts

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

    def read_id_map_if_present(self, manifest: dict) -> IdMap | None:
        """The id map a (previous) manifest names, unchecked; None when it names none or the file is gone."""
        name = manifest.get("ids_file")
        if not name or not (self.dir / name).exists():
            return None
        return IdMap.from_table(pq.read_table(self.dir / name))

    def read_id_map(self, name: str) -> IdMap:
        """The id map file a manifest names, checked: FAISS ids unique and ascending, every doc id once."""
        path = self.dir / name
        try:
            ids = IdMap.from_table(pq.read_table(path).cast(IDS_SCHEMA))
        except FileNotFoundError:
            raise
        except Exception as err:  # pyarrow's errors on a damaged file
            raise IntegrityError(
                f"index id map {path} cannot be read ({err}). {index_mend(self.dir, [name])}", [str(path)]
            ) from None
        if len(set(ids.doc_id)) != len(ids) or (len(ids) > 1 and not np.all(np.diff(ids.faiss_id) > 0)):
            raise IntegrityError(
                f"index id map {path} is damaged (repeated ids). {index_mend(self.dir, [name])}", [str(path)]
            )
        return ids

    # --- FAISS shards ---------------------------------------------------------------------
    def read_shard(self, name: str, spec, mmap: bool):
        """A FAISS shard the manifest names (``spec``: its IndexSpec); a file FAISS cannot read is a clear error, not a traceback."""
        from graphtx.index import faiss_index

        path = self.shards_dir / name
        try:
            return faiss_index.read(path, spec, mmap=mmap)
        except FileNotFoundError:
            raise
        except RuntimeError as err:
            reason = str(err).strip().splitlines()[-1] if str(err).strip() else type(err).__name__
            raise IntegrityError(
                f"index {self.dir}: FAISS shard {path} cannot be read ({reason[:200]}). {index_mend(self.dir, [f'{SHARDS_DIR}/{name}'])}",
                [str(path)],
            ) from None

    def manifest_seal(self) -> str:
        """The seal of the manifest now on disk ('' when unreadable): says whether a writer replaced it."""
        try:
            return (self.manifest() or {}).get(integrity.SEAL_KEY, "")
        except IntegrityError:
            return ""

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


# --- what an index was built with ------------------------------------------------------


def index_config_of(manifest: dict) -> IndexConfig:
    """The IndexConfig an index was built with (fields this graphtx does not know are ignored)."""
    return known_only(IndexConfig, manifest.get("config"))


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
