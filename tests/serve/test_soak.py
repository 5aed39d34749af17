"""benchmarks/soak_serve.py for three minutes at the admission limit on a tiny index (make test-slow): the script starts
and stops `graphtx serve` itself, and its three conditions hold (memory flat after warm-up, no answer but 503 and the
expected 4xx, p95 at the end within 20% of the start). The hour-long run is the benchmark's default."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(420)
def test_three_minutes_at_the_admission_limit_hold(tiny_index, tiny, tmp_path):
    out = tmp_path / "soak"
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "soak_serve.py"), "--index", str(tiny_index), "--corpus"]
        + [str(tiny["corpus"]), "--minutes", "3", "--out", str(out), "--max-pending", "4", "--concurrency", "8"],
        capture_output=True,
        text=True,
        timeout=400,
        cwd=ROOT,
    )
    report = json.loads((out / "soak.json").read_text())
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    assert all(check["pass"] for check in report["verdict"]["checks"].values())
    assert (out / "soak.png").is_file() and (out / "soak.md").is_file()
