"""What the default suite imports is installed by `make setup` (graphtx's dev + peers-mpnet extras), nothing more.

CI builds its environment from those extras alone. A test, or a benchmark script a test loads, that imports a package
outside them fails there and nowhere else (stop 59: a study script imported pandas, which this machine had from the
Ray extra and CI did not). Read from the source (``ast``): every import of tests/, graphtx/ and benchmarks/ must be the
standard library, the repository's own, a distribution in that closure, under ``try: ... except ImportError`` (or a
broader handler), or skipped by ``pytest.importorskip`` in the same file; the modules that are an extra's own home are
named below.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
SETUP_EXTRAS = ("dev", "peers-mpnet")  # Makefile's setup: pip install -e '.[dev,peers-mpnet]'
# modules whose whole purpose is an optional extra: imported only when the user asks for it
EXTRA_HOMES = {
    "graphtx/train/ray_launch.py": {"ray"},
    "benchmarks/bench_ray.py": {"ray"},
}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(name: str, extras: tuple[str, ...]) -> set[str]:
    """The distributions `pip install name[extras]` installs (normalized names), from the installed metadata."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    todo = [(name, extras)]
    while todo:
        dist_name, dist_extras = todo.pop()
        key = (normalized(dist_name), dist_extras)
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.distribution(dist_name).requires or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in dist_extras or ("",)):
                todo.append((req.name, tuple(sorted(req.extras))))
    return {dist for dist, _ in seen}


def local_names() -> set[str]:
    """Top-level names the repository's own files provide (scripts put their folder on sys.path)."""
    names = {"graphtx", "tests", "benchmarks"}
    for folder in ("tests", "benchmarks", "benchmarks/studies"):
        names |= {p.stem for p in (REPO / folder).rglob("*.py")}
    return names


def guarded(parents: list[ast.AST]) -> bool:
    for node in parents:
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                caught = ast.unparse(handler.type) if handler.type is not None else "BaseException"
                if any(name in caught for name in ("ImportError", "ModuleNotFoundError", "Exception")):
                    return True
    return False


def unguarded_imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every import in the file not under an ImportError handler."""
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST, parents: list[ast.AST]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names = [child.module]
            else:
                names = []
            if names and not guarded(parents):
                found.extend((child.lineno, name.split(".")[0]) for name in names)
            walk(child, [*parents, child])

    walk(ast.parse(path.read_text(encoding="utf-8")), [])
    return found


def outside_setup(paths: list[Path]) -> list[str]:
    allowed = closure("graphtx", SETUP_EXTRAS)
    providers = metadata.packages_distributions()
    local = local_names()
    problems = []
    for path in paths:
        relative = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)
        source = path.read_text(encoding="utf-8")
        skipped = {m.split(".")[0] for m in re.findall(r"importorskip\(\s*[\"']([\w.]+)", source)}
        exempt = EXTRA_HOMES.get(relative, set()) | skipped
        for line, top in unguarded_imports(path):
            if top in sys.stdlib_module_names or top in local or top in exempt or top == "__future__":
                continue
            dists = providers.get(top)
            if dists is None:
                problems.append(f"{relative}:{line} imports {top}, which is not installed")
            elif not any(normalized(d) in allowed for d in dists):
                problems.append(f"{relative}:{line} imports {top} ({', '.join(dists)}), outside {SETUP_EXTRAS}")
    return problems


def repository_sources() -> list[Path]:
    return sorted(p for folder in ("graphtx", "tests", "benchmarks") for p in (REPO / folder).rglob("*.py"))


@pytest.mark.timeout(60)
def test_the_repository_imports_only_what_setup_installs_unless_guarded():
    try:
        metadata.distribution("graphtx")
    except metadata.PackageNotFoundError:
        pytest.skip("graphtx is not installed (its metadata names the extras): run make setup")
    assert outside_setup(repository_sources()) == []


@pytest.mark.timeout(30)
def test_the_checker_flags_an_unguarded_package_and_passes_guarded_and_skipped_ones(tmp_path):
    script = tmp_path / "study.py"
    script.write_text(
        "import json\nimport numpy\nimport a_package_nobody_installs\n"
        "try:\n    import another_missing_one\nexcept ImportError:\n    pass\n"
        "import pytest\nthird = pytest.importorskip('a_third_missing_one')\n"
        "def later():\n    import a_fourth_missing_one.sub\n"
    )
    problems = outside_setup([script])
    assert [p.split(":", 1)[1] for p in problems] == [
        "3 imports a_package_nobody_installs, which is not installed",
        "11 imports a_fourth_missing_one, which is not installed",
    ]
