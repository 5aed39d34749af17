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


# --- the peer vector cache ---------------------------------------------------------------
# eval.peer_vector_cache_dir defaults to a folder in the home directory: each test gets its own (no test reads another's
# vectors, none writes into the user's cache); subprocesses inherit it.


@pytest.fixture(autouse=True)
def _own_peer_vector_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRAPHTX_PEER_VECTOR_CACHE", str(tmp_path_factory.mktemp("peer-vectors")))
    monkeypatch.setenv("GRAPHTX_MODEL_VECTOR_CACHE", str(tmp_path_factory.mktemp("model-vectors")))
    monkeypatch.setenv("GRAPHTX_PARSE_CACHE", str(tmp_path_factory.mktemp("parse-cache")))  # parse and build's default


# --- one torch thread ---------------------------------------------------------------------
# Tests of these places run tensors of a few dozen rows: intra-op threads only add overhead (100x
# slower on a busy 2-core machine, where OpenMP threads wait for each other). Module-scoped: set
# once a module, restored after it (no graphtx code changes the thread count without restoring it).
ONE_TORCH_THREAD = (
    "tests/model/",
    "tests/train/",
    "tests/rank/",
    "tests/index/",
    "tests/serve/",
    "tests/eval/test_phrases.py",
    "tests/eval/test_late.py",
    "tests/eval/test_systems.py",
)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread(request):
    if not request.path.resolve().relative_to(REPO).as_posix().startswith(ONE_TORCH_THREAD):
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --- tiny artefacts shared by several test packages (read-only: tests write beside them) -------


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A corpus, graphs directory and model for 120 documents (no spaCy; ``tests/index/fixtures.py``):
    the index, serve and rank tests' documents."""
    from tests.index.fixtures import N_DOCS, make_corpus, make_graphs, make_model

    root = tmp_path_factory.mktemp("tiny")
    corpus = make_corpus(root, range(N_DOCS))
    return {
        "root": root,
        "corpus": corpus,
        "graphs": make_graphs(root, range(N_DOCS), corpus=corpus),
        "model": make_model(root),
    }


@pytest.fixture(scope="session")
def tiny_index(tiny, tmp_path_factory):
    """A flat index over the tiny graphs, small chunks (several parts)."""
    from graphtx.config import IndexConfig
    from graphtx.index.build import build_index

    out = tmp_path_factory.mktemp("tiny_index") / "index"
    build_index(tiny["model"], tiny["graphs"], out, IndexConfig(chunk_size=32), progress=False)
    return out


TINY_CLAIMS = (
    "A snowthrower comprising: an auger housing; and a chute mounted on the auger housing.",
    "A battery pack comprising: a plurality of cells; and a cooling plate connected to the cells.",
    "A valve comprising a seat and a stem, wherein the stem is connected to an actuator.",
)


@pytest.fixture(scope="session")
def tiny_pretrained(tmp_path_factory) -> Path:
    """``corpus/`` (three one-claim documents D-0..D-2), ``tokens/`` (graphtx pretrain) and ``graphs/``
    (graphtx parse, all three kinds) under one directory: what init-model, encode and the model system need."""
    from graphtx.config import ParseConfig, PretrainConfig
    from graphtx.corpus.schema import Claim, PatentDocument
    from graphtx.corpus.store import CorpusWriter
    from graphtx.graphs.parse import parse_corpus
    from graphtx.text.pretrain import pretrain

    root = tmp_path_factory.mktemp("tiny_pretrained")
    with CorpusWriter(root / "corpus") as w:
        for i, claim in enumerate(TINY_CLAIMS):
            w.add_document(
                PatentDocument(f"D-{i}", "test", "-", claims=(Claim(1, claim, True),), description=claim + " " + claim),
                (),
                "-",
                str(i),
            )
    pretrain(
        [root / "corpus"],
        root / "tokens",
        PretrainConfig(vocab_size=200, dim=16, epochs=1, buckets=5_000),
        seed=0,
        progress=False,
    )
    parse_corpus(root / "corpus", root / "graphs", ParseConfig(), progress=False)
    return root


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
    ray = pytest.importorskip(
        "ray", reason="Ray is the optional extra: pip install 'graphtx[ray]' (its tests run in make test-slow)"
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()
