"""benchmarks/studies/checkpoint_model.py: a copy of an adaptation's checkpoint becomes a model directory that holds
exactly the checkpoint's weights and loads as any model does."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import checkpoint_model  # noqa: E402  (our own script: it imports or the test fails, never skips)


@pytest.mark.timeout(120)
def test_checkpoint_weights_become_a_loadable_model_directory(tiny_pretrained, tmp_path):
    from graphtx.config import load_config
    from graphtx.model.io import load_model
    from graphtx.train.run import starting_model

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("seed: 3\n")  # the defaults: what a run directory's config names
    model, *_ = starting_model(load_config(run / "config.yaml"), None, str(tiny_pretrained / "tokens"), 3)
    with torch.no_grad():  # weights no fresh model of seed 3 has: the directory must hold the checkpoint's
        for p in model.parameters():
            p.add_(0.25)
    torch.save({"model": model.state_dict(), "state": {"step": 175}}, tmp_path / "step-175.pt")
    out = tmp_path / "model-175"
    args = [str(run), str(tmp_path / "step-175.pt"), "--tokens", str(tiny_pretrained / "tokens")]
    assert checkpoint_model.main([*args, "--corpus", str(tiny_pretrained / "corpus"), "--out", str(out)]) == 0
    loaded = load_model(out)  # checksums verified at open
    for name, value in model.state_dict().items():
        torch.testing.assert_close(loaded.model.state_dict()[name], value)
    assert (out / "corpus_profile.json").is_file() and loaded.tokenizer is not None

    other = torch.nn.Linear(2, 2).state_dict()  # another architecture: refused, nothing written
    torch.save({"model": other, "state": {"step": 1}}, tmp_path / "other.pt")
    with pytest.raises(RuntimeError, match="state_dict"):
        checkpoint_model.main(
            [
                str(run),
                str(tmp_path / "other.pt"),
                *args[2:],
                "--corpus",
                str(tiny_pretrained / "corpus"),
                "--out",
                str(tmp_path / "bad"),
            ]
        )
    assert not (tmp_path / "bad").exists()
