"""Every test module is one the default run collects: no folder of tests/ matches pytest's norecursedirs."""

from __future__ import annotations

import fnmatch
import tomllib

import pytest

from graphtx.config import REPO_ROOT

# pytest's own default, used when pyproject.toml names none: it holds "build", which once hid tests/build
PYTEST_DEFAULT = [".*", "*.egg", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"]


@pytest.mark.timeout(30)
def test_no_folder_of_tests_is_one_pytest_skips():
    options = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    patterns = options.get("norecursedirs", PYTEST_DEFAULT)
    folders = {p.parent for p in (REPO_ROOT / "tests").rglob("test_*.py")} - {REPO_ROOT / "tests"}
    hidden = sorted(
        str(f.relative_to(REPO_ROOT))
        for f in folders
        for part in f.relative_to(REPO_ROOT / "tests").parts
        if any(fnmatch.fnmatch(part, pattern) for pattern in patterns)
    )
    assert not hidden, f"pytest's norecursedirs skips these test folders: {hidden}"
