"""Pretrain under faults: a full disk or Ctrl-C while the tokens directory is written leaves the previous one."""

from __future__ import annotations

import errno
import random

import numpy as np
import pytest

from graphtx.cli import main
from graphtx.corpus.store import CorpusWriter
from tests.faults import snapshot
from tests.text.test_pretrain import TINY, _document


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng, out = random.Random(1), tmp_path_factory.mktemp("corpus")
    with CorpusWriter(out) as w:
        for i in range(30):
            w.add_document(_document(i, rng), (), "-", str(i))
    return out


@pytest.mark.parametrize(
    "fault", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()], ids=["disk-full", "ctrl-c"]
)
def test_a_failed_rerun_leaves_the_previous_tokens_byte_identical(corpus, tmp_path, monkeypatch, capsys, fault):
    out = tmp_path / "tokens"
    assert main(["pretrain", str(corpus), "--out", str(out), "--quiet", *TINY]) == 0
    before = snapshot(out)
    real_save, calls = np.save, []

    def save_then_fail(path, array, *a, **kw):  # the second array of the re-run meets the fault
        calls.append(path)
        if len(calls) == 2:
            raise fault
        return real_save(path, array, *a, **kw)

    with monkeypatch.context() as patch:
        patch.setattr(np, "save", save_then_fail)
        assert main(["pretrain", str(corpus), "--out", str(out), "--quiet", "--seed", "9", *TINY]) == 1
    err = capsys.readouterr().err
    assert ("disk full at" in err) if isinstance(fault, OSError) else ("interrupted" in err)
    assert snapshot(out) == before
    assert main(["pretrain", str(corpus), "--out", str(out), "--quiet", "--seed", "9", *TINY]) == 0
    assert snapshot(out) != before and not (out / ".partial").exists()
