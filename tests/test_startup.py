"""The command answers --help and usage errors without loading torch, spaCy or FAISS (what makes start-up slow).

Measured start-up times live in benchmarks/ (bench_cli.py), not here; this checks the cause: which heavy
libraries a command has imported by the time it has refused its arguments.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "spacy", "faiss", "lightgbm", "sklearn", "transformers")

CASES = {
    "help": (["--help"], 0),
    "search help": (["search", "--help"], 0),
    "eval citations help": (["eval", "citations", "--help"], 0),
    "train help": (["train", "--help"], 0),
    "a bad date": (["search", "--index", "nowhere", "--text", "a battery", "--before", "01/01/2008"], 2),
    "an unknown option": (["index", "--out", "nowhere", "--bogus"], 2),
    "a bad port": (["serve", "--index", "nowhere", "--port", "99999"], 2),
    "a bad cut-off": (["eval", "citations", "corpus", "--cutoff", "later"], 2),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", sorted(CASES))
def test_help_and_usage_errors_load_no_heavy_library(case):
    argv, status = CASES[case]
    code = (
        "import contextlib, io, json, sys\n"
        "from graphtx.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:\n"
        f"    status = main({argv!r})\n"
        f"print(json.dumps({{'status': status, 'err': err.getvalue(), 'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == status, result["err"]
    assert result["heavy"] == [], f"`graphtx {' '.join(argv)}` imported {result['heavy']} before answering"
