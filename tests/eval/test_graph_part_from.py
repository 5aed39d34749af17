"""benchmarks/studies/graph_part_from.py: candidates get another graph's graph part beside their own lexical part."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import graph_part_from  # noqa: E402  (our own script: it imports or the test fails, never skips)
import reweight_vectors  # noqa: E402


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.timeout(30)
def test_each_candidate_takes_its_own_documents_graph_part_and_keeps_its_lexical_part():
    rng = np.random.default_rng(0)
    cand_graph, cand_lex = _unit(rng.normal(size=(3, 4))), _unit(rng.normal(size=(3, 6)))
    src_graph, src_lex = _unit(rng.normal(size=(2, 4))), _unit(rng.normal(size=(2, 6)))
    candidates = reweight_vectors.join_parts(cand_graph, cand_lex, 0.4)
    source = reweight_vectors.join_parts(src_graph, src_lex, 0.4)
    mixed, kept = graph_part_from.mixed_vectors(candidates, ["a", "b", "c"], source, ["c", "a"], 4, 0.4)
    assert kept == 1  # b has no source vector
    graph, lexical = reweight_vectors.split_parts(mixed, 4, 0.4)
    np.testing.assert_allclose(lexical, cand_lex, atol=1e-6)  # every lexical part the candidate's own
    np.testing.assert_allclose(graph[0], src_graph[1], atol=1e-6)  # a: the source's row of a, not its first row
    np.testing.assert_allclose(graph[2], src_graph[0], atol=1e-6)
    np.testing.assert_allclose(graph[1], cand_graph[1], atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(mixed, axis=1), 1.0, atol=1e-5)


@pytest.mark.timeout(120)
def test_the_written_files_pair_with_each_other_and_refuse_another_models(tiny, tmp_path):
    from graphtx.model.embed import embed_graphs, read_vectors
    from graphtx.model.io import load_model, save_model

    src = load_model(tiny["model"])
    idf = np.linspace(1.0, 3.0, src.model.config.vocab_size)
    save_model(tmp_path / "m", src.model.with_lexical_channel(64, 0.4, idf), tokenizer=src.tokenizer)
    m = load_model(tmp_path / "m")
    for kind in ("description", "first_claim"):
        embed_graphs(m.model, m.tokenizer, tiny["graphs"], kind, tmp_path / f"{kind}.parquet", progress=False)
    out_c, out_q = tmp_path / "mixed.parquet", tmp_path / "queries.parquet"
    args = [str(tmp_path / "description.parquet"), str(tmp_path / "first_claim.parquet"), str(tmp_path / "m")]
    assert graph_part_from.main([*args, "--out-candidates", str(out_c), "--out-queries", str(out_q)]) == 0
    ids, mixed, meta = read_vectors(out_c)
    q_ids, queries, q_meta = read_vectors(out_q)
    d_ids, description, _ = read_vectors(tmp_path / "description.parquet")
    f_ids, first_claim, _ = read_vectors(tmp_path / "first_claim.parquet")
    assert ids == d_ids and q_ids == f_ids
    np.testing.assert_allclose(queries, first_claim, atol=1e-6)
    out_dim = m.model.config.out_dim
    row = {d: i for i, d in enumerate(f_ids)}
    at = [row[d] for d in ids]
    np.testing.assert_allclose(mixed[:, :out_dim], first_claim[at, :out_dim], atol=1e-6)
    np.testing.assert_allclose(mixed[:, out_dim:], description[:, out_dim:], atol=1e-6)
    assert meta["model_fingerprint"] == q_meta["model_fingerprint"]  # the evaluation pairs them
    assert meta["model_fingerprint"].endswith(graph_part_from.SUFFIX)
    with pytest.raises(SystemExit, match="not as .* wrote it"):  # already mixed: not split again
        graph_part_from.main(
            [
                str(out_c),
                str(tmp_path / "first_claim.parquet"),
                str(tmp_path / "m"),
                "--out-candidates",
                str(tmp_path / "x.parquet"),
                "--out-queries",
                str(tmp_path / "y.parquet"),
            ]
        )
    assert not (tmp_path / "x.parquet").exists()
