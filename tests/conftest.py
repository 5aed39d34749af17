from __future__ import annotations

import os
import signal
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


# --- no hang, no orphan -------------------------------------------------------------------
# pytest-timeout gives every test a limit (pyproject.toml); multi-process and server tests set
# tighter ones. These hooks let .ci/run name the test that was running if the whole run is stopped,
# and end any process a test left behind.


def pytest_runtest_logstart(nodeid, location):
    trace = os.environ.get("GRAPHTX_CURRENT_TEST")
    if trace:
        Path(trace).write_text(nodeid + "\n")


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def pytest_sessionfinish(session, exitstatus):
    left = {pid: _command_line(pid) for pid in _descendants(os.getpid())}
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # multiprocessing's resource tracker lives as long as the interpreter that started it, by design
    stray = {pid: cmd for pid, cmd in left.items() if "resource_tracker" not in cmd}
    if stray:
        print(f"\nconftest: killed {len(stray)} process(es) the tests left behind: {stray}")


def _command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "?"


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray for the whole test session (2 CPUs, no dashboard), shut down at the end; skipped without the extra."""
    ray = pytest.importorskip("ray", reason="Ray is the optional extra: pip install 'graphtx[ray]' (its tests run in make test-slow)")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()
