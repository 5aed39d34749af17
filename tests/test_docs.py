"""The docs site: its generated references match the code, and ``mkdocs build --strict`` passes offline."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphtx.cli import build_parser, main
from graphtx.cli.reference import HELP_COLUMNS, _subcommands, config_reference, field_comments, pages

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
REGENERATE = "regenerate with `python -m graphtx.cli.reference docs` (or `make docs`) and commit the pages"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(pages()))
def test_the_committed_reference_pages_are_the_generated_ones(name):
    committed = DOCS / name
    assert committed.exists(), f"{committed} is missing: {REGENERATE}"
    assert committed.read_text(encoding="utf-8") == pages()[name], f"{committed} differs from the code: {REGENERATE}"


@pytest.mark.timeout(60)
def test_the_cli_page_holds_what_help_prints_for_every_command(monkeypatch):
    """Each command's ``--help`` as a user sees it (``graphtx ... --help``) is on the page, word for word."""
    monkeypatch.setenv("COLUMNS", str(HELP_COLUMNS))
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    commands = [p.prog.split()[1:] for p in _subcommands(build_parser())]
    assert ["search"] in commands and ["eval", "citations"] in commands
    for words in commands:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                code = main([*words, "--help"])
            except SystemExit as stop:
                code = stop.code
        assert code in (0, None)
        assert f"## {' '.join(['graphtx', *words])}\n\n```text\n{out.getvalue()}```" in page, (
            f"`graphtx {' '.join(words)} --help` differs: {REGENERATE}"
        )


def test_the_config_page_names_every_key_with_its_default_and_meaning():
    from graphtx.config import GraphtxConfig

    page = config_reference()
    for section in dataclasses.fields(GraphtxConfig):
        value = getattr(GraphtxConfig(), section.name)
        if not dataclasses.is_dataclass(value):
            assert f"| `{section.name}` |" in page
            continue
        assert f"## `{section.name}:`" in page
        notes = field_comments(type(value))
        for f in dataclasses.fields(value):
            if f.init:
                row = re.search(
                    rf"^\| `{f.name}` \| .* \| (.*) \|$", page.split(f"## `{section.name}:`")[1].split("\n## ")[0], re.M
                )
                assert row, f"{section.name}.{f.name} is not on the config page"
                assert notes.get(f.name), (
                    f"{section.name}.{f.name} has no comment in its dataclass: say what it does beside it"
                )


def test_field_comments_read_the_comment_above_and_beside_a_field():
    @dataclasses.dataclass(frozen=True)
    class Example:
        plain: int = 1
        beside: int = 2  # said beside
        # said above,
        # on two lines
        above: tuple[str, ...] = ("a",)  # and beside

    assert field_comments(Example) == {
        "plain": "",
        "beside": "said beside",
        "above": "said above, on two lines and beside",
    }


@pytest.mark.timeout(240)
def test_mkdocs_builds_the_site_strictly_and_offline(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    pytest.importorskip("material", reason="the Material theme is not installed: pip install -e '.[docs]'")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        env=os.environ | {"NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=220,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    html = {p: p.read_text(encoding="utf-8", errors="replace") for p in site.rglob("*.html")}
    assert (site / "reference" / "cli.html").exists() and (site / "index.html").exists()
    remote = re.compile(r"""<(?:script|link|img)\b[^>]*\b(?:src|href)=["'](?:https?:)?//""", re.I)
    fetched = {str(p.relative_to(site)): remote.findall(text)[:3] for p, text in html.items() if remote.search(text)}
    assert not fetched, f"pages that would fetch assets from the network: {fetched}"
    assert not any("fonts.googleapis" in text for text in html.values())
    shutil.rmtree(site)
