from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data not present (real patent data lives beside the repo, not in it)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def parse_config():
    from graphtx.config import ParseConfig

    return ParseConfig()


@pytest.fixture(scope="session")
def builder(parse_config):
    """One spaCy pipeline for the whole test session (loading takes about a second)."""
    from graphtx.graphs.builder import GraphBuilder

    return GraphBuilder(parse_config)
