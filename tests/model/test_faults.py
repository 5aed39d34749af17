"""Model directories and vectors files under faults: an interrupted save leaves the previous one whole."""

from __future__ import annotations

import pytest
import torch

from graphtx.model import GraphEncoder, load_model, save_model
from tests.faults import snapshot
from tests.model import HashTokenizer, tiny_config


def test_an_interrupted_save_leaves_the_previous_model_byte_identical(tmp_path, monkeypatch):
    out = save_model(tmp_path / "m", GraphEncoder(tiny_config(), seed=0), tokenizer=HashTokenizer())
    before = snapshot(out)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(torch, "save", interrupted)
        with pytest.raises(KeyboardInterrupt):
            save_model(out, GraphEncoder(tiny_config(), seed=1), tokenizer=HashTokenizer())
    assert snapshot(out) == before
    load_model(out)  # still loads, fingerprint and weights agree
    save_model(out, GraphEncoder(tiny_config(), seed=1), tokenizer=HashTokenizer())
    assert snapshot(out) != before and sorted(p.name for p in out.iterdir()) == sorted(before)
