"""The live id map: latest version wins, removals hide it; parts commit atomically; row access."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from graphtx.index.idmap import IDS_SCHEMA, IdMap, resolve_live
from graphtx.index.store import IndexStore


def _versions(rows):
    return pa.table(
        {k: [r[i] for r in rows] for i, k in enumerate(("faiss_id", "doc_id", "part", "row"))}, schema=IDS_SCHEMA
    )


def test_latest_version_wins_and_removal_hides_it():
    versions = _versions([(0, "A", 0, 0), (1, "B", 0, 1), (2, "C", 0, 2), (3, "A", 1, 0), (4, "D", 1, 1)])
    live = resolve_live(versions, removed=set())
    assert live.doc_id == ["B", "C", "A", "D"] and live.faiss_id.tolist() == [1, 2, 3, 4]
    assert (live.part[live.position_of("A")], live.row[live.position_of("A")]) == (1, 0)
    live = resolve_live(versions, removed={3, 2})
    assert live.doc_id == ["B", "D"]  # A's latest version removed: the older one does not come back


def test_faiss_ids_map_to_positions_and_padding_to_minus_one():
    live = IdMap(np.array([5, 9, 12], np.int64), ["a", "b", "c"], np.zeros(3, np.int32), np.arange(3, dtype=np.int32))
    assert live.positions_of_faiss(np.array([[12, -1, 5, 7, 99]])).tolist() == [[2, -1, 0, -1, -1]]
    empty = IdMap.from_table(IDS_SCHEMA.empty_table())
    assert empty.positions_of_faiss(np.array([1, 2])).tolist() == [-1, -1] and len(empty) == 0
    with pytest.raises(KeyError, match="'zz' is not in the index"):
        live.position_of("zz")


def test_parts_are_immutable_and_rows_read_back_in_any_order(tmp_path):
    store = IndexStore(tmp_path)
    table = pa.table({"faiss_id": np.arange(10, dtype=np.int64), "doc_id": [f"d{i}" for i in range(10)]})
    store.commit_part(0, table, row_group_size=3)
    with pytest.raises(FileExistsError):
        store.commit_part(0, table, row_group_size=3)
    (store.parts_dir / "part-000001.parquet.tmp").write_bytes(b"half a file")
    assert store.part_numbers() == [0] and store.clean_partial_files() == 1
    rows = store.read_rows([(0, 9), (0, 0), (0, 4), (0, 5)], ["doc_id"])
    assert [r["doc_id"] for r in rows] == ["d9", "d0", "d4", "d5"]
    assert store.read_versions().column("row").to_pylist() == list(range(10))


def test_removals_accumulate(tmp_path):
    store = IndexStore(tmp_path)
    store.add_removed([3], ["x"])
    store.add_removed([7, 8], ["y", "z"])
    assert store.removed_ids() == {3, 7, 8}
