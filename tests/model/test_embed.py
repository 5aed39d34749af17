"""From a tokens directory and a graphs directory to graph vectors in Parquet, through the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from graphtx.cli import main
from graphtx.graphs.parse import iter_graphs
from graphtx.model.embed import read_vectors
from graphtx.model.io import load_model
from graphtx.text.bpe import PatentTokenizer


@pytest.fixture(scope="module")
def dirs(tiny_pretrained):
    """corpus/, tokens/ and graphs/ of three documents (shared, tests/conftest.py)."""
    return tiny_pretrained


@pytest.fixture(scope="module")
def tiny_yaml(tmp_path_factory):
    path = tmp_path_factory.mktemp("embed") / "tiny.yaml"
    path.write_text(
        yaml.safe_dump(
            {"model": {"node_dim": 32, "heads": 2, "layers": 1, "base_dim": 48, "reduced_dim": 8, "num_experts": 2}}
        )
    )
    return path


@pytest.mark.parametrize("reduced,dim", [(False, 48), (True, 8)])
def test_init_model_then_encode_writes_normalised_vectors(dirs, tiny_yaml, tmp_path, capsys, reduced, dim):
    model_dir = tmp_path / "model"
    args = [
        "init-model",
        "--config",
        str(tiny_yaml),
        "--tokens",
        str(dirs / "tokens"),
        "--out",
        str(model_dir),
        "--json",
    ]
    assert main(args + (["--reduced"] if reduced else [])) == 0
    init = json.loads(capsys.readouterr().out)
    assert init["out_dim"] == dim

    out = tmp_path / "vectors.parquet"
    assert (
        main(
            [
                "encode",
                "--model",
                str(model_dir),
                "--graphs",
                str(dirs / "graphs"),
                "--kind",
                "first_claim",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    ids, vectors, meta = read_vectors(out)
    assert ids == ["D-0", "D-1", "D-2"] and vectors.shape == (3, dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert meta["model_fingerprint"] == init["fingerprint"]

    # the same vectors as encoding the graphs directly with the loaded model
    model = load_model(model_dir).model
    direct = model.encode(
        list(iter_graphs(dirs / "graphs", kind="first_claim")), PatentTokenizer.load(model_dir)
    ).numpy()
    np.testing.assert_allclose(vectors, direct, rtol=1e-5, atol=1e-6)


def test_init_model_takes_vocab_and_token_vectors_from_the_tokens(dirs, tmp_path):
    from graphtx.model.config import ModelConfig
    from graphtx.model.embed import init_model
    from graphtx.text.pretrain import load_tokens

    model, tokenizer = init_model(ModelConfig.small(), dirs / "tokens", seed=0)
    _, vectors = load_tokens(dirs / "tokens")
    assert model.config.vocab_size == tokenizer.vocab_size and model.config.token_dim == 16
    np.testing.assert_array_equal(model.swem.embedding.weight.detach().numpy(), vectors)


def test_encode_with_a_missing_model_is_a_clear_error(dirs, tmp_path, capsys):
    assert (
        main(
            [
                "encode",
                "--model",
                str(tmp_path / "none"),
                "--graphs",
                str(dirs / "graphs"),
                "--out",
                str(tmp_path / "v.parquet"),
            ]
        )
        == 2
    )
    assert "error" in capsys.readouterr().err


def test_a_bad_device_is_named_before_the_model_is_read(dirs, tiny_yaml, tmp_path, capsys):
    """`--device gpu` or a GPU PyTorch does not see: said in words, not as a damaged model directory."""
    import torch

    from graphtx.model.chunks import resolve_device

    model_dir = tmp_path / "model"
    assert (
        main(
            [
                "init-model",
                "--config",
                str(tiny_yaml),
                "--tokens",
                str(dirs / "tokens"),
                "--out",
                str(model_dir),
                "--quiet",
            ]
        )
        == 0
    )
    base = ["encode", "--model", str(model_dir), "--graphs", str(dirs / "graphs"), "--out", str(tmp_path / "v.parquet")]
    capsys.readouterr()
    assert main([*base, "--device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert "give cpu, cuda, cuda:N or auto" in err and "cannot be read" not in err
    assert not (tmp_path / "v.parquet").exists()
    assert resolve_device("cpu") == "cpu" and resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        assert main([*base, "--device", "cuda"]) == 2
        assert "sees no CUDA GPU" in capsys.readouterr().err
        with pytest.raises(ValueError, match="sees no CUDA GPU"):
            resolve_device("cuda:0")
    with pytest.raises(ValueError, match="GPU\\(s\\) here|sees no CUDA GPU"):
        resolve_device("cuda:99")
