"""benchmarks/studies/resketch_vectors.py: the lexical part sketched again, equal to encoding with a channel of that size."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import resketch_vectors  # noqa: E402  (our own script: it imports or the test fails, never skips)


@pytest.mark.timeout(120)
def test_resketched_file_equals_encoding_with_a_channel_of_that_size(tiny, tmp_path):
    from graphtx.model.embed import embed_graphs, read_vectors
    from graphtx.model.io import load_model, save_model

    src = load_model(tiny["model"])
    idf = np.linspace(1.0, 3.0, src.model.config.vocab_size)
    for name, dim in (("d64", 64), ("d128", 128)):
        save_model(tmp_path / name, src.model.with_lexical_channel(dim, 0.4, idf), tokenizer=src.tokenizer)
        m = load_model(tmp_path / name)
        embed_graphs(m.model, m.tokenizer, tiny["graphs"], "first_claim", tmp_path / f"{name}.parquet", progress=False)
    args = [str(tmp_path / "d64.parquet"), str(tmp_path / "d64"), str(tiny["graphs"])]
    assert resketch_vectors.main([*args, "--dim", "128", "--out", str(tmp_path / "re.parquet")]) == 0
    ids, vectors, meta = read_vectors(tmp_path / "re.parquet")
    want_ids, want, _ = read_vectors(tmp_path / "d128.parquet")
    assert ids == want_ids
    np.testing.assert_allclose(vectors, want, atol=1e-5)  # the graph part kept, the sketch the encoder's at 128
    assert meta["model_fingerprint"].endswith("+lexical_dim=128+top_tokens=0")
    assert (
        resketch_vectors.main([*args, "--dim", "64", "--top-tokens", "2", "--out", str(tmp_path / "top.parquet")]) == 0
    )
    _, top, _ = read_vectors(tmp_path / "top.parquet")
    assert top.shape == (len(ids), src.model.config.out_dim + 64) and not np.allclose(
        top, read_vectors(tmp_path / "d64.parquet")[1]
    )
    with pytest.raises(SystemExit, match="not as .* wrote it"):  # already re-sketched: not split again
        resketch_vectors.main(
            [
                str(tmp_path / "re.parquet"),
                str(tmp_path / "d64"),
                str(tiny["graphs"]),
                "--dim",
                "64",
                "--out",
                str(tmp_path / "x.parquet"),
            ]
        )
    with pytest.raises(SystemExit, match="not by"):  # another model's vectors
        resketch_vectors.main(
            [
                str(tmp_path / "d128.parquet"),
                str(tmp_path / "d64"),
                str(tiny["graphs"]),
                "--dim",
                "64",
                "--out",
                str(tmp_path / "x.parquet"),
            ]
        )
    assert not (tmp_path / "x.parquet").exists()


def test_bad_sizes_are_refused(capsys):
    with pytest.raises(SystemExit):
        resketch_vectors.main(["v.parquet", "m", "g", "--dim", "0", "--out", "o.parquet"])
    assert "--dim must be >= 1" in capsys.readouterr().err
