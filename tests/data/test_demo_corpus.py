"""The embedded demo corpus: present, readable without ../shared, and the README's demo end to end."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphtx.config import REPO_ROOT, IngestConfig
from graphtx.corpus.citations import read_citations
from graphtx.corpus.ingest import ingest
from graphtx.corpus.store import iter_documents
from graphtx.data import DEMO_DIR


def test_demo_corpus_ingests_completely(tmp_path):
    report = ingest([DEMO_DIR], tmp_path / "c", IngestConfig(), progress=False)
    assert (report.documents, report.skipped) == (371, 0)
    docs = list(iter_documents(tmp_path / "c"))
    assert all(d.id.startswith("US-") and d.title for d in docs)
    assert sum(bool(d.claims) for d in docs) == 371
    categories = {c.category for c in read_citations(tmp_path / "c")}
    assert categories == {"examiner", "applicant", "other"}


def test_demo_corpus_is_small_enough_to_ship():
    assert sum(p.stat().st_size for p in DEMO_DIR.iterdir()) < 5 * 2**20


@pytest.mark.slow
@pytest.mark.timeout(1900)
def test_make_demo_runs_end_to_end(tmp_path):
    """The README's first command (without the set-up step, which `make test` has done)."""
    run = tmp_path / "demo"
    result = subprocess.run(
        ["make", "-C", str(REPO_ROOT), "demo", f"RUN={run}", f"PYTHON={sys.executable}"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (run / "graph_first_claim.png").read_bytes()[:4] == b"\x89PNG"
    assert (run / "graphs" / "graphs.parquet").exists()
