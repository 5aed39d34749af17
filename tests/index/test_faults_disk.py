"""A full disk during `graphtx index`: exit 1 with "disk full at PATH", the served index as it was, a re-run completes.

The full disk is an injected ``OSError(ENOSPC)`` at a write point (no tmpfs mount needed): while a
part of an incremental add is committed, and while a FAISS shard is written at finalize.
"""

from __future__ import annotations

import errno

import pytest

from graphtx.cli import main
from graphtx.config import IndexConfig
from graphtx.index import faiss_index
from graphtx.index.build import build_index
from graphtx.index.search import Index
from graphtx.index.store import IndexStore
from tests.index.fixtures import make_graphs

FIRST, MORE = range(0, 40), range(40, 70)


def _searchable(out) -> list[tuple[str, float]]:
    index = Index.open(out)
    return [(h.doc_id, round(h.score, 5)) for h in index.search(doc_id="T-00003", k=10)]


def _full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("where", ["commit_part", "faiss_write"])
def test_a_full_disk_while_indexing_keeps_the_index_and_a_rerun_completes(tiny, tmp_path, monkeypatch, capsys, where):
    out = tmp_path / "index"
    build_index(
        tiny["model"],
        make_graphs(tmp_path, FIRST, "first"),
        out,
        IndexConfig(chunk_size=8, shard_size=16),
        progress=False,
    )
    manifest = (out / "manifest.json").read_bytes()
    hits = _searchable(out)
    more = make_graphs(tmp_path, MORE, "more")
    args = [
        "index",
        "--model",
        str(tiny["model"]),
        "--graphs",
        str(more),
        "--out",
        str(out),
        "--chunk-size",
        "8",
        "--shard-size",
        "16",
        "--quiet",
    ]

    with monkeypatch.context() as patch:
        if where == "commit_part":  # the second part of the add meets the full disk
            real, calls = IndexStore.commit_part, []

            def commit_then_full(self, *a, **kw):
                calls.append(1)
                return real(self, *a, **kw) if len(calls) < 2 else _full()

            patch.setattr(IndexStore, "commit_part", commit_then_full)
        else:
            patch.setattr(faiss_index, "write", _full)
        assert main(args) == 1
    err = capsys.readouterr().err
    assert "disk full at" in err and "Traceback" not in err
    assert (out / "manifest.json").read_bytes() == manifest  # what is served is the previous complete index
    assert _searchable(out) == hits

    assert main(args) == 0  # the same command completes, every document once
    index = Index.open(out)
    assert len(index) == len(FIRST) + len(MORE)
    assert sorted(IndexStore(out).live().doc_id) == sorted(f"T-{i:05d}" for i in [*FIRST, *MORE])
