"""benchmarks/studies/reweight_vectors.py: encoded vectors re-mixed at another lexical weight, as if encoded at it."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import reweight_vectors  # noqa: E402  (our own script: it imports or the test fails, never skips)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.timeout(30)
def test_the_remixed_cosine_is_the_weighted_sum_of_the_parts_cosines():
    rng = np.random.default_rng(0)
    graph, lexical = _unit(rng.normal(size=(5, 4))), _unit(rng.normal(size=(5, 6)))
    joined = reweight_vectors.join_parts(graph, lexical, 0.4)
    g, lex = reweight_vectors.split_parts(joined, 4, 0.4)
    np.testing.assert_allclose(g, graph, atol=1e-6)
    np.testing.assert_allclose(lex, lexical, atol=1e-6)
    remixed = reweight_vectors.join_parts(g, lex, 0.7)
    np.testing.assert_allclose(remixed @ remixed.T, 0.3 * graph @ graph.T + 0.7 * lexical @ lexical.T, atol=1e-5)


@pytest.mark.timeout(30)
def test_the_equal_mix_weight_balances_the_spreads():
    rng = np.random.default_rng(1)
    graph = _unit(np.ones((40, 4)) + 0.05 * rng.normal(size=(40, 4)))  # nearly constant cosines
    lexical = _unit(rng.normal(size=(40, 6)))
    b, sd_g, sd_l = reweight_vectors.equal_mix_weight(reweight_vectors.join_parts(graph, lexical, 0.4), 4, docs=40)
    assert sd_g < sd_l and b < 0.5
    assert (1 - b) * sd_g == pytest.approx(b * sd_l)
    with pytest.raises(ValueError, match="constant"):
        reweight_vectors.equal_mix_weight(np.ones((5, 5)), 3)


@pytest.mark.timeout(120)
def test_remixed_file_equals_encoding_at_that_weight(tiny, tmp_path):
    from graphtx.model.embed import embed_graphs, read_vectors
    from graphtx.model.io import load_model, save_model

    src = load_model(tiny["model"])
    idf = np.linspace(1.0, 3.0, src.model.config.vocab_size)
    for name, weight in (("at4", 0.4), ("at7", 0.7)):
        save_model(tmp_path / name, src.model.with_lexical_channel(64, weight, idf), tokenizer=src.tokenizer)
    encoded = {}
    for name in ("at4", "at7"):
        m = load_model(tmp_path / name)
        embed_graphs(m.model, m.tokenizer, tiny["graphs"], "first_claim", tmp_path / f"{name}.parquet", progress=False)
        encoded[name] = read_vectors(tmp_path / f"{name}.parquet")
    assert (
        reweight_vectors.main(
            [
                str(tmp_path / "at4.parquet"),
                str(tmp_path / "at4"),
                "--weight",
                "0.7",
                "--out",
                str(tmp_path / "re.parquet"),
            ]
        )
        == 0
    )
    ids, vectors, meta = read_vectors(tmp_path / "re.parquet")
    assert ids == encoded["at7"][0]
    np.testing.assert_allclose(vectors, encoded["at7"][1], atol=1e-5)
    assert meta["model_fingerprint"].endswith("+lexical_weight=0.7")
    with pytest.raises(SystemExit, match="no lexical channel"):
        reweight_vectors.main(
            [str(tmp_path / "at4.parquet"), str(tiny["model"]), "--weight", "0.5", "--out", str(tmp_path / "x.parquet")]
        )


@pytest.mark.timeout(30)
def test_vectors_another_model_wrote_are_refused(tmp_path):
    (tmp_path / "fingerprint.txt").write_text("abc\n")
    reweight_vectors.check_written_by({"model_fingerprint": "abc"}, tmp_path, "v.parquet")
    for written in ("abd", ""):
        with pytest.raises(SystemExit, match="not by"):
            reweight_vectors.check_written_by({"model_fingerprint": written}, tmp_path, "v.parquet")
    with pytest.raises(SystemExit, match=r"not as .* wrote it \(\+lexical_weight=0.7\)"):
        reweight_vectors.check_written_by({"model_fingerprint": "abc+lexical_weight=0.7"}, tmp_path, "v.parquet")
