"""FAISS index types, parameters, shards merged as one, files and removal."""

from __future__ import annotations

import numpy as np
import pytest

from graphtx.config import IndexConfig
from graphtx.index import faiss_index
from graphtx.index.faiss_index import IndexSpec, auto_pq_m, resolve_spec


def _clustered(n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(20, d))
    x = centres[rng.integers(0, 20, n)] + 0.3 * rng.normal(size=(n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _build(spec: IndexSpec, x: np.ndarray, ids: np.ndarray):
    template = faiss_index.train(spec, x, seed=0, use_gpu="never")
    return faiss_index.fill(template, x, ids, spec)


def test_auto_parameters():
    assert auto_pq_m(150) == 30 and auto_pq_m(2048) == 512 and auto_pq_m(256) == 64 and auto_pq_m(48) == 12
    spec = resolve_spec(IndexConfig(index_type="ivfpq"), 150, 1_000_000)
    assert spec.nlist == min(4000, 100_000 // 39) and spec.pq_m == 30 and spec.factory == "IVF2564,PQ30x8"
    assert resolve_spec(IndexConfig(index_type="hnsw", hnsw_m=16), 64, 10).factory == "IDMap2,HNSW16"
    refined = resolve_spec(IndexConfig(index_type="ivfpq", ivf_refine="SQ8"), 150, 1_000_000)
    assert (
        refined.factory == "IDMap2,IVF2564,PQ30x8,Refine(SQ8)" and refined.k_factor == 4 and not refined.supports_remove
    )
    with pytest.raises(ValueError, match="needs at least 256 vectors to train"):
        resolve_spec(IndexConfig(index_type="ivfpq"), 64, 100)
    with pytest.raises(ValueError, match="must divide"):
        resolve_spec(IndexConfig(index_type="ivfpq", pq_m=7), 64, 1000)


def test_flat_is_exact_and_keeps_the_given_ids():
    x = _clustered(500, 32, 0)
    ids = np.arange(1000, 1500, dtype=np.int64)
    spec = resolve_spec(IndexConfig(), 32, 500)
    index = _build(spec, x, ids)
    scores, found = faiss_index.search_shards([index], x[:5], 10, spec)
    exact = x[:5] @ x.T  # (5, 500)
    np.testing.assert_allclose(scores, -np.sort(-exact, axis=1)[:, :10], atol=1e-5)
    assert (found[:, 0] == ids[:5]).all()


@pytest.mark.parametrize(
    "cfg,min_recall",
    [
        (IndexConfig(index_type="hnsw", hnsw_m=16, hnsw_ef_search=64), 0.9),
        (IndexConfig(index_type="ivfpq", pq_nbits=6, ivf_nprobe=8), 0.5),
        (IndexConfig(index_type="ivfpq", pq_nbits=6, ivf_nprobe=8, ivf_refine="SQ8"), 0.9),
    ],
)
def test_approximate_indexes_recall_against_flat(cfg, min_recall):
    x = _clustered(2000, 32, 1)
    ids = np.arange(2000, dtype=np.int64)
    queries = _clustered(50, 32, 2)
    flat_spec = resolve_spec(IndexConfig(), 32, 2000)
    _, truth = faiss_index.search_shards([_build(flat_spec, x, ids)], queries, 10, flat_spec)
    spec = resolve_spec(cfg, 32, 2000)
    _, got = faiss_index.search_shards([_build(spec, x, ids)], queries, 10, spec)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, got)])
    assert recall >= min_recall, recall


def test_shards_merge_into_one_ranking(tmp_path):
    x = _clustered(300, 16, 3)
    ids = np.arange(300, dtype=np.int64)
    spec = resolve_spec(IndexConfig(), 16, 300)
    whole = _build(spec, x, ids)
    parts = [_build(spec, x[a:b], ids[a:b]) for a, b in ((0, 100), (100, 110), (110, 300))]
    s1, i1 = faiss_index.search_shards([whole], x[:7], 20, spec)
    s2, i2 = faiss_index.search_shards(parts, x[:7], 20, spec)
    np.testing.assert_allclose(s1, s2, atol=1e-6)
    assert (i1 == i2).all()
    s3, _ = faiss_index.search_shards(parts, x[:1], 1000, spec)  # k beyond the vectors: all of them
    assert s3.shape == (1, 300)


@pytest.mark.parametrize("index_type,refine", [("flat", ""), ("hnsw", ""), ("ivfpq", ""), ("ivfpq", "SQ8")])
def test_file_round_trip_memory_mapped_and_removal(tmp_path, index_type, refine):
    x = _clustered(600, 16, 4)
    ids = np.arange(600, dtype=np.int64) * 3
    spec = resolve_spec(IndexConfig(index_type=index_type, pq_nbits=6, hnsw_m=8, ivf_refine=refine), 16, 600)
    index = _build(spec, x, ids)
    faiss_index.write(index, tmp_path / "a.faiss")
    assert not list(tmp_path.glob("*.tmp"))
    loaded = faiss_index.read(tmp_path / "a.faiss", spec, mmap=True)
    a = faiss_index.search_shards([index], x[:5], 5, spec)
    b = faiss_index.search_shards([loaded], x[:5], 5, spec)
    np.testing.assert_allclose(a[0], b[0], atol=1e-6)
    assert (a[1] == b[1]).all()
    if spec.supports_remove:
        writable = faiss_index.read(tmp_path / "a.faiss", spec, mmap=False)
        assert faiss_index.remove(writable, ids[:10]) == 10 and writable.ntotal == 590
        _, found = faiss_index.search_shards([writable], x[:10], 5, spec)
        assert not set(found.ravel()) & set(ids[:10].tolist())


def test_use_gpu_always_without_a_gpu_is_a_clear_error():
    import faiss

    if faiss.get_num_gpus() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="sees no GPU"):
        faiss_index.gpu_count("always")
    assert faiss_index.gpu_count("auto") == 0


@pytest.mark.gpu
def test_gpu_search_matches_cpu():
    import faiss

    if faiss.get_num_gpus() == 0:
        pytest.skip("no GPU")
    x = _clustered(3000, 64, 5)
    ids = np.arange(3000, dtype=np.int64)
    for cfg in (IndexConfig(), IndexConfig(index_type="ivfpq", ivf_nprobe=64)):
        spec = resolve_spec(cfg, 64, 3000)
        template = faiss_index.train(spec, x, seed=0, use_gpu="always")
        cpu = faiss_index.fill(template, x, ids, spec)
        faiss_index.set_search_params(cpu, spec)
        gpu = faiss_index.to_gpu(cpu, spec, "always")
        a = faiss_index.search_shards([cpu], x[:20], 10, spec)
        b = faiss_index.search_shards([gpu], x[:20], 10, spec, on_gpu=True)
        overlap = np.mean([len(set(p) & set(q)) / 10 for p, q in zip(a[1], b[1])])
        assert overlap > 0.95
