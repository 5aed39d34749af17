"""The docs site's CLI and config references, generated from the parsers and the config dataclasses.

``python -m graphtx.cli.reference [DOCS_DIR]`` writes ``DOCS_DIR/reference/cli.md`` (every ``graphtx``
command's ``--help``, at a fixed width of 100 columns) and ``DOCS_DIR/reference/config.md`` (every config
key: its type, default and the comment beside it in the dataclass). ``tests/test_docs.py`` regenerates
both and fails when the committed pages differ, so the references cannot drift from the code.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import io
import os
import sys
import textwrap
import tokenize
from collections.abc import Iterator
from pathlib import Path

HELP_COLUMNS = 100  # the width --help is rendered at in the reference (argparse reads COLUMNS)
CLI_PAGE, CONFIG_PAGE = "reference/cli.md", "reference/config.md"
_MAKE = "`python -m graphtx.cli.reference docs` (or `make docs`)"


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and every parser under it, depth first, in the order they were added."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases point at the same parser
                yield from _subcommands(sub)


def help_text(parser: argparse.ArgumentParser) -> str:
    """``parser.format_help()`` at ``HELP_COLUMNS`` columns, whatever the terminal."""
    fixed = {
        "COLUMNS": str(HELP_COLUMNS),
        "NO_COLOR": "1",
        "PYTHON_COLORS": "0",
    }  # argparse colours help on 3.14 at a terminal
    saved = {name: os.environ.get(name) for name in fixed}
    os.environ.update(fixed)
    try:
        return parser.format_help().rstrip() + "\n"
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def cli_reference() -> str:
    from graphtx.cli import build_parser

    parts = [
        "# CLI reference\n",
        f"Every `graphtx` command's `--help`, generated from the command's own parsers by {_MAKE}; "
        "`tests/test_docs.py` fails when this page and the parsers differ.\n",
    ]
    parsers = list(_subcommands(build_parser()))
    parts.append("\n".join(f"- [`{p.prog}`](#{_anchor(p.prog)})" for p in parsers) + "\n")
    for parser in parsers:
        parts.append(f"## {parser.prog}\n\n```text\n{help_text(parser)}```\n")
    return "\n".join(parts)


def _anchor(title: str) -> str:
    """The id MkDocs (Python-Markdown's toc) gives a heading: lower case, words joined by hyphens."""
    return "-".join("".join(c for c in title.lower() if c.isalnum() or c in " -_").split())


# --- config ------------------------------------------------------------------------------


def field_comments(cls: type) -> dict[str, str]:
    """Each field of dataclass ``cls`` -> the comments on the lines just above it and on its own lines, joined."""
    source = textwrap.dedent(inspect.getsource(cls))
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    lines = source.splitlines()
    out = {}
    (node,) = ast.parse(source).body
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        above, line = [], stmt.lineno - 1
        while (
            line >= 1
            and line in comments
            and lines[line - 1].lstrip().startswith("#")
            and not comments[line].startswith("---")
        ):
            above.insert(0, comments[line])
            line -= 1
        own = [comments[n] for n in range(stmt.lineno, stmt.end_lineno + 1) if n in comments]
        out[stmt.target.id] = " ".join(above + own)
    return out


def _default(f: dataclasses.Field) -> object:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _yaml_value(value: object) -> str:
    """A default as it would be written in a config YAML (tuples as lists), in code format for the table."""
    import yaml

    def plain(v):
        if isinstance(v, (tuple, list)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    text = yaml.safe_dump(plain(value), default_flow_style=True, width=10_000).strip()
    text = text.removesuffix("\n...").removesuffix("...").strip()
    return f"`{text}`".replace("|", "\\|")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _summary(cls: type) -> str:
    """The first paragraph of the class's docstring, else of its module's (a dataclass without one gets its signature)."""
    doc = cls.__doc__ or ""
    if not doc.strip() or doc.startswith(f"{cls.__name__}("):
        doc = sys.modules[cls.__module__].__doc__ or ""
    return inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ").replace("``", "`")


def config_reference() -> str:
    from graphtx.config import GraphtxConfig

    parts = [
        "# Config reference\n",
        f"Every key of a config YAML (`configs/small.yaml`, `configs/demo.yaml`, or your own with `extends:`), generated from "
        f"the config dataclasses by {_MAKE}; `tests/test_docs.py` fails when this page and the dataclasses differ. "
        "Unknown keys are errors. The default is the dataclass's; a shipped config may set another.\n",
    ]
    top = [f for f in dataclasses.fields(GraphtxConfig) if not dataclasses.is_dataclass(_default(f))]
    sections = [f for f in dataclasses.fields(GraphtxConfig) if dataclasses.is_dataclass(_default(f))]
    comments = field_comments(GraphtxConfig)
    parts.append("## Top level\n\n| key | type | default | meaning |\n|---|---|---|---|")
    parts += [
        f"| `{f.name}` | `{_cell(str(f.type))}` | {_yaml_value(_default(f))} | {_cell(comments.get(f.name, ''))} |"
        for f in top
    ]
    parts.append("")
    for section in sections:
        cls = type(_default(section))
        summary = _summary(cls)
        parts.append(
            f"## `{section.name}:`\n\n`{cls.__module__}.{cls.__name__}`" + (f": {summary}" if summary else "") + "\n"
        )
        parts.append("| key | type | default | meaning |\n|---|---|---|---|")
        notes = field_comments(cls)
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            parts.append(
                f"| `{f.name}` | `{_cell(str(f.type))}` | {_yaml_value(_default(f))} | {_cell(notes.get(f.name, ''))} |"
            )
        parts.append("")
    return "\n".join(parts)


def pages() -> dict[str, str]:
    """Relative path under the docs folder -> the page's text."""
    return {CLI_PAGE: cli_reference(), CONFIG_PAGE: config_reference()}


def write(docs_dir: str | Path) -> list[Path]:
    from graphtx.atomic import atomic_write_text

    written = []
    for name, text in pages().items():
        path = Path(docs_dir) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for path in write(argv[0] if argv else "docs"):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
