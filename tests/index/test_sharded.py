"""IVF-PQ shards merged into one on-disk index (graphtx/index/sharded.py): same hits, same directory format (no Ray needed)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from graphtx.cli import main
from graphtx.config import IndexConfig
from graphtx.index.build import build_index, remove_documents
from graphtx.index.finalize import verify_index
from graphtx.index.search import Index
from graphtx.index.sharded import merge_ondisk
from graphtx.index.store import IndexStore
from tests.index.fixtures import doc_id, make_corpus, make_graphs, make_model

TINY_IVF = IndexConfig(
    index_type="ivfpq", pq_nbits=4, ivf_nlist=4, ivf_nprobe=4, chunk_size=8, shard_size=16, bm25=False
)


@pytest.fixture()
def built(tmp_path):
    corpus = make_corpus(tmp_path, range(60))
    graphs, model = make_graphs(tmp_path, range(60), corpus=corpus), make_model(tmp_path)
    build_index(model, graphs, tmp_path / "sharded", TINY_IVF, progress=False)
    shutil.copytree(tmp_path / "sharded", tmp_path / "merged")
    return {"root": tmp_path, "model": model, "corpus": corpus}


def _hits(index_dir, queries=(0, 7, 33, 59)):
    index = Index.open(index_dir)
    return [[(h.doc_id, round(h.score, 5)) for h in index.search(doc_id=doc_id(i), k=10)] for i in queries]


@pytest.mark.timeout(120)
def test_merged_ondisk_index_gives_the_same_hits_and_verifies(built):
    root = built["root"]
    before = IndexStore(root / "merged").manifest()
    assert len(before["shards"]) == 4
    manifest = merge_ondisk(root / "merged")
    (shard,) = manifest["shards"]
    assert shard["count"] == 60 and shard["ivfdata"].endswith(".ivfdata") and manifest["ids_file"] == before["ids_file"]
    assert sorted(p.name for p in (root / "merged" / "shards").iterdir()) == sorted(
        [shard["file"], shard["ivfdata"], manifest["trained"]]
    )
    assert _hits(root / "merged") == _hits(root / "sharded")
    assert verify_index(root / "merged")["files"] == len(manifest["checksums"])
    shutil.move(
        root / "merged", root / "moved"
    )  # the inverted lists are found beside the index file, not by an old path
    assert _hits(root / "moved") == _hits(root / "sharded")
    assert merge_ondisk(root / "moved") == IndexStore(root / "moved").manifest()  # merged already: nothing to do


@pytest.mark.timeout(120)
def test_a_merged_index_built_again_with_nothing_to_do_stays_recorded_as_merged(built):
    """Found by the Ray merge-kill test (seed 5): a driver killed after the merge's manifest was written, the same
    command again finalizes with nothing to rebuild; its manifest lost ``merged_ondisk`` though the shard stayed merged."""
    root = built["root"]
    merged = merge_ondisk(root / "merged")["merged_ondisk"]
    build_index(built["model"], root / "graphs", root / "merged", TINY_IVF, progress=False)  # up to date
    manifest = IndexStore(root / "merged").manifest()
    assert manifest["merged_ondisk"] == merged and manifest["shards"][0]["ivfdata"] == merged["ivfdata"]
    assert _hits(root / "merged") == _hits(root / "sharded")


@pytest.mark.timeout(180)
def test_merged_index_takes_later_adds_and_removals(built, tmp_path):
    root = built["root"]
    merge_ondisk(root / "merged")
    more = make_graphs(tmp_path, range(60, 80), name="more", corpus=make_corpus(tmp_path / "c2", range(60, 80)))
    for out in ("sharded", "merged"):
        build_index(built["model"], more, root / out, TINY_IVF, progress=False)
    merged = IndexStore(root / "merged").manifest()
    assert (
        merged["shards"][0].get("ivfdata") and len(merged["shards"]) == 3 and merged["count"] == 80
    )  # the merged shard is kept
    assert _hits(root / "merged", (0, 70)) == _hits(root / "sharded", (0, 70))
    remerged = merge_ondisk(root / "merged")  # the merged shard and the new ones into one again
    assert (
        len(remerged["shards"]) == 1
        and remerged["shards"][0]["count"] == 80
        and len(list((root / "merged" / "shards").glob("*.ivfdata"))) == 1
    )
    assert _hits(root / "merged", (0, 70)) == _hits(root / "sharded", (0, 70))
    for out in ("sharded", "merged"):
        remove_documents(root / out, [doc_id(3), doc_id(70)], progress=False)
    merged = IndexStore(root / "merged").manifest()
    assert not any(s.get("ivfdata") for s in merged["shards"]) and not list(
        (root / "merged" / "shards").glob("*.ivfdata")
    )  # rewritten plain
    assert _hits(root / "merged", (0, 71)) == _hits(root / "sharded", (0, 71))
    verify_index(root / "merged")


@pytest.mark.timeout(60)
def test_merge_ondisk_is_refused_for_flat_shards(tmp_path, capsys):
    graphs, model = make_graphs(tmp_path, range(10)), make_model(tmp_path)
    code = main(
        [
            "index",
            "--model",
            str(model),
            "--graphs",
            str(graphs),
            "--out",
            str(tmp_path / "i"),
            "--merge-ondisk",
            "--quiet",
        ]
    )
    assert code != 0 and "--merge-ondisk merges IVF-PQ shards" in capsys.readouterr().err
    assert not (tmp_path / "i").exists()
    build_index(model, graphs, tmp_path / "i", IndexConfig(), progress=False)
    with pytest.raises(ValueError, match="only IVF-PQ shards"):
        merge_ondisk(tmp_path / "i")
    np.testing.assert_equal(IndexStore(tmp_path / "i").manifest()["count"], 10)


@pytest.mark.timeout(120)
def test_a_merge_killed_part_way_leaves_nothing_after_the_next_one(built):
    root = built["root"]
    shards = root / "merged" / "shards"
    (shards / ".merge-killed").mkdir()  # a merge killed mid-way: its temporary folder, half written
    (shards / ".merge-killed" / "shard-0000-x.ivfdata").write_bytes(b"\0" * 64)
    (shards / "shard-0000-stray.faiss").write_bytes(b"\0" * 64)  # a pair renamed in before the manifest named it
    (shards / "shard-0000-stray.ivfdata").write_bytes(b"\0" * 64)
    manifest = merge_ondisk(root / "merged")
    assert sorted(p.name for p in shards.iterdir()) == sorted(
        [manifest["shards"][0]["file"], manifest["shards"][0]["ivfdata"], manifest["trained"]]
    )
    (
        shards / ".merge-again"
    ).mkdir()  # killed after its manifest: the next merge, which has nothing to merge, clears it
    assert merge_ondisk(root / "merged") == IndexStore(root / "merged").manifest()
    assert not (shards / ".merge-again").exists() and verify_index(root / "merged")["files"] == len(
        manifest["checksums"]
    )
