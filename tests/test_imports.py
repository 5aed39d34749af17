"""The import structure of graphtx/: data flows one way, infrastructure sits under the stages, no circle.

Read from the source (``ast``), every import counted wherever it stands: module level, inside a function, and under
``if TYPE_CHECKING:`` (an annotation that names a higher layer's type couples the two as much as a call does).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "graphtx"

# Lowest first. A module may import its own layer and the layers below it, never one above.
LAYERS: list[tuple[str, ...]] = [
    # infrastructure: knows no stage (atomic writes, locks, integrity, journals, the local pool, the Ray engine, progress bars)
    (
        "errors",
        "lock",
        "atomic",
        "integrity",
        "shards",
        "parallel",
        "ray_engine",
        "paths",
        "from_dict",
        "links",
        "metrics",
        "progress",
        "cache_home",
        "threads",
        "hardware",
    ),
    ("corpus",),  # ingest
    ("graphs",),  # parse
    ("text",),  # BPE + FastText
    ("model",),  # encoder
    ("train",),
    ("rank",),  # rankers, fed by index and eval
    ("index",),
    ("eval",),
    ("serve",),
    ("config",),  # assembles every stage's config
    ("build",),  # graphtx build: every stage in one command
    ("cli", "data", "__main__", "__init__"),  # the command, the demo-corpus builder, the package itself
]
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = ["graphtx", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str], root: Path = ROOT) -> set[str]:
    """The graphtx modules ``path`` (a file under ``root``, the graphtx package folder) imports; a name imported
    from a package counts as its submodule when it is one."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            while target not in modules and "." in target:
                target = target.rpartition(".")[0]
            if target.startswith("graphtx") and target in modules and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in ROOT.rglob("*.py")}
    return {name: imports_of(path, set(files)) for name, path in files.items()}


def top_package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_sees_a_circle_a_function_level_and_a_type_checking_import(tmp_path):
    graph = {
        "graphtx.a": {"graphtx.b"},
        "graphtx.b": {"graphtx.c"},
        "graphtx.c": {"graphtx.a"},
        "graphtx.d": {"graphtx.a"},
    }
    assert circles(graph) == [["graphtx.a", "graphtx.b", "graphtx.c"]]
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from graphtx.config import X\n"
        "def f():\n    from graphtx.train.run import train\n    import graphtx.index.build\n"
        "if not TYPE_CHECKING:\n    from graphtx.config import Y\n"
    )
    modules = {"graphtx.config", "graphtx.train.run", "graphtx.index.build", "graphtx.index"}
    assert imports_of(source, modules, root=tmp_path) == {"graphtx.train.run", "graphtx.index.build", "graphtx.config"}
    only_for_types = tmp_path / "t.py"
    only_for_types.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from graphtx.index import build\n"
    )
    assert imports_of(only_for_types, modules, root=tmp_path) == {"graphtx.index.build"}
    (tmp_path / "index").mkdir()
    relative = tmp_path / "index" / "m.py"
    relative.write_text("from .build import x\nfrom ..train import run\n")
    assert imports_of(relative, modules | {"graphtx.train", "graphtx.index.m"}, root=tmp_path) == {
        "graphtx.index.build",
        "graphtx.train.run",
    }


def test_every_package_of_graphtx_has_a_layer():
    packages = {top_package(m) for m in import_graph()}
    assert packages <= set(LAYER_OF), f"add to LAYERS in tests/test_imports.py: {sorted(packages - set(LAYER_OF))}"


def test_graphtx_has_no_import_circle():
    found = circles(import_graph())
    assert not found, "import circles (break each by moving the shared piece down a layer): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_no_package_imports_a_higher_one():
    upward = defaultdict(list)
    for module, targets in import_graph().items():
        for target in targets:
            if LAYER_OF[top_package(target)] > LAYER_OF[top_package(module)]:
                upward[module].append(target)
    assert not upward, "imports from a lower layer to a higher one: " + "; ".join(
        f"{m} -> {', '.join(sorted(t))}" for m, t in sorted(upward.items())
    )


@pytest.mark.parametrize("engine", ["graphtx.ray_engine", "graphtx.parallel"])
def test_the_engines_import_no_stage(engine):
    graph = import_graph()
    stages = {top_package(t) for t in graph[engine]} - set(LAYERS[0])
    assert not stages, f"{engine} imports the stages {sorted(stages)}: a stage hands the engine its work instead"
