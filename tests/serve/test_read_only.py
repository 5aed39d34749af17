"""A service never writes into what it serves: a read-only index without BM25 state answers hybrid queries."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from graphtx.config import IndexConfig, ServeConfig  # noqa: E402
from graphtx.index.build import build_index  # noqa: E402
from graphtx.index.search import Index  # noqa: E402
from graphtx.serve.app import create_app  # noqa: E402


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``root`` with its mode, size and mtime (ns)."""
    out = {}
    for p in sorted([root, *root.rglob("*")]):
        st = p.lstat()
        out[str(p.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def set_writable(root: Path, writable: bool) -> None:
    for p in [root, *root.rglob("*")]:
        mode = p.lstat().st_mode
        p.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


@pytest.mark.timeout(120)
def test_read_only_index_without_bm25_serves_hybrid_and_stays_untouched(tiny, tmp_path, builder, caplog):
    out = tmp_path / "index"
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=32, bm25=False), progress=False)
    assert not (out / "bm25").exists()
    set_writable(out, False)  # (root ignores the bits: the snapshot below is the real check)
    try:
        before = snapshot(out)
        index = Index.open(out)
        index.parser._builder = builder
        with (
            caplog.at_level("WARNING", logger="graphtx.index.hybrid"),
            TestClient(create_app(index, ServeConfig()), base_url="http://localhost") as client,
        ):
            r = client.post(
                "/search",
                json={"text": "1. A zorblat9 device comprising a pump and a nozzle.", "k": 100, "hybrid": True},
            )
            assert r.status_code == 200, r.text
            hits = r.json()["hits"]
            assert (
                next(h for h in hits if h["bm25_rank"] == 1)["doc_id"] == "T-00009"
            )  # its rare word: BM25 (in memory) found it
            r = client.post("/search", json={"id": "T-00004", "k": 3, "hybrid": True})
            assert r.status_code == 200 and len(r.json()["hits"]) == 3
        assert "building it in memory" in caplog.text and "--bm25" in caplog.text
        assert snapshot(out) == before  # nothing written, created or touched
        assert not os.access(out, os.W_OK) or os.geteuid() == 0
    finally:
        set_writable(out, True)
