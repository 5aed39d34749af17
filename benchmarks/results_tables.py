"""The results pages' tables and figures, generated from the regressions' result JSON (``make results``).

    python benchmarks/results_tables.py            # rewrite README.md, benchmarks/RESULTS.md, docs/results.md, docs/howto/own-corpus.md in place
    python benchmarks/results_tables.py --check    # exit 1 and name each place that differs (tests/test_regressions.py)

A page holds generated parts between markers; everything between them is replaced:

* ``<!-- table: NAME -->`` ... ``<!-- /table -->``: the table of ``benchmarks/regressions/NAME.json`` (``<!-- table:
  NAME | SYSTEM; SYSTEM; vs=REF & REF -->``: those systems only, in that order, and the ratios to those references only;
  one row a system: seeds, Recall@3 and nDCG@150 as mean ± sd over seeds, each ratio to a reference with its paired-bootstrap
  95% interval) and a line naming the regression file, its seeds and its cost;
* ``<!-- v: NAME|SYSTEM|METRIC -->`` ... ``<!-- /v -->``: one system's mean (4 decimals);
  ``<!-- v: NAME|SYSTEM|METRIC|REFERENCE -->``: its ratio to the reference with the interval (``1.04x [0.92, 1.18]``);
  ``<!-- v: NAME|fact|KEY.KEY -->``: a value of the regression's ``facts`` (``:%`` after the key: as a percentage;
  ``:int``: rounded to a whole number; ``KEY/KEY`` divides two of them);
  ``<!-- v: NAME|seeds -->``: how many seeds the regression's JSON holds; ``<!-- v: NAME|SYSTEM|queries -->``: the
  queries a system was scored on. In a table row write the separators ``\\|`` (``<!-- v: NAME\\|seeds -->``): Markdown
  splits a row's cells at every bare ``|``, a comment's too.

A result JSON that a page names and that is absent is an error: no number on those pages is typed by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REGRESSIONS = REPO / "benchmarks" / "regressions"
PAGES = (
    REPO / "README.md",
    REPO / "benchmarks" / "RESULTS.md",
    REPO / "docs" / "results.md",
    REPO / "docs" / "howto" / "own-corpus.md",
)
TABLE = re.compile(
    r"(<!-- table: (?P<name>[\w.-]+)(?:\s*\|(?P<only>[^>]*?))? -->\n)(?P<body>.*?)(<!-- /table -->)", re.S
)
VALUE = re.compile(r"(<!-- v: (?P<spec>[^>]*?) -->)(?P<body>.*?)(<!-- /v -->)", re.S)
METRICS = ("Recall@3", "nDCG@150")


def result(name: str, cache: dict) -> dict:
    if name not in cache:
        path = REGRESSIONS / f"{name}.json"
        if not path.is_file():
            raise KeyError(
                f"benchmarks/regressions/{name}.json does not exist: run `python benchmarks/regress.py benchmarks/regressions/{name}.yaml`"
            )
        cache[name] = json.loads(path.read_text(encoding="utf-8"))
    return cache[name]


def ratio(v: dict) -> str:
    return f"{v['ratio']:.2f}x [{v['low']:.2f}, {v['high']:.2f}]"


def link(page: Path, name: str) -> str:
    """The regression file, as a link a reader of ``page`` can follow (the docs site names the path: it lives outside)."""
    target = (
        REPO / "benchmarks" / "regressions" / f"{name}.yaml"
    )  # where it is committed (REGRESSIONS may be a copy in tests)
    if page.parent.name == "docs":
        return f"`benchmarks/regressions/{name}.yaml`"
    return f"[{name}]({target.relative_to(page.parent).as_posix() if target.is_relative_to(page.parent) else target.relative_to(REPO).as_posix()})"


def table(page: Path, name: str, cache: dict, only: str | None = None) -> str:
    r = result(name, cache)
    refs_wanted = None
    if only:
        wanted = [x.strip() for x in only.split(";") if x.strip() and not x.strip().startswith("vs=")]
        refs_wanted = next(
            ([y.strip() for y in x.strip()[3:].split("&")] for x in only.split(";") if x.strip().startswith("vs=")),
            None,
        )
        missing = [x for x in wanted if x not in r["systems"]]
        if missing:
            raise KeyError(f"{name}.json has no system {missing[0]!r} (it has {', '.join(r['systems'])})")
        r = {**r, "systems": {x: r["systems"][x] for x in wanted}} if wanted else r
    refs = refs_wanted or list(dict.fromkeys(ref for s in r["systems"].values() for ref in s["vs"]))
    head = ["system", "seeds", "queries", *METRICS, *(f"{m} / {ref} [95%]" for ref in refs for m in METRICS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for system, s in r["systems"].items():
        cells = [system, str(len(r["seeds"])), f"{s['queries']:,}"]
        for m in METRICS:
            v = s["metrics"][m]
            cells.append(f"{v['mean']:.4f}" + (f" ± {v['sd']:.4f}" if len(r["seeds"]) > 1 else ""))
        for ref in refs:
            for m in METRICS:
                cells.append(ratio(s["vs"][ref][m]) if ref in s["vs"] else "")
        lines.append("| " + " | ".join(cells) + " |")
    seeds = f"seeds {', '.join(map(str, r['seeds']))}" + (
        "" if r["seeds"] == r["seeds_planned"] else f" of {', '.join(map(str, r['seeds_planned']))} planned"
    )
    cost = "; ".join(f"{k}: {v}" for k, v in r.get("cost", {}).items())
    lines.append("")
    lines.append(f"*{link(page, name)}: {r['title']}; {seeds}; {cost}. `{r['command']}`.*")
    return "\n".join(lines) + "\n"


def value(spec: str, cache: dict) -> str:
    parts = [p.strip() for p in spec.replace("\\|", "|").split("|")]  # in a table row the separators are \|
    r = result(parts[0], cache)
    if parts[1:] == ["seeds"]:
        return str(len(r["seeds"]))
    if parts[1] == "fact":
        key, _, fmt = parts[2].partition(":")
        num, _, den = key.partition("/")
        x = _fact(r["facts"], num)
        if den:
            x = x / _fact(r["facts"], den)
        if fmt == "%":
            return f"{100 * x:.1f}%"
        if fmt == "int":
            return f"{round(x):,}"
        return f"{x:,}" if isinstance(x, int) else f"{x:.4f}" if isinstance(x, float) else str(x)
    s = r["systems"][parts[1]]
    if parts[2:] == ["queries"]:
        return f"{s['queries']:,}"
    if len(parts) == 3:
        return f"{s['metrics'][parts[2]]['mean']:.4f}"
    return ratio(s["vs"][parts[3]][parts[2]])


def _fact(facts: dict, dotted: str):
    x = facts
    for key in dotted.split("."):
        x = x[key]
    return x


def render(page: Path, text: str, cache: dict) -> str:
    text = TABLE.sub(lambda m: m.group(1) + table(page, m.group("name"), cache, m.group("only")) + m.group(5), text)
    return VALUE.sub(lambda m: m.group(1) + value(m.group("spec"), cache) + m.group(4), text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 naming each page that differs from its JSON"
    )
    args = ap.parse_args()
    cache: dict = {}
    stale = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        try:
            new = render(page, text, cache)
        except KeyError as err:
            print(f"{page.relative_to(REPO)}: {err.args[0]}", file=sys.stderr)
            return 1
        if new != text:
            stale.append(page.relative_to(REPO))
            if not args.check:
                page.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(
            f"generated parts differ from the regressions' JSON: {', '.join(map(str, stale))} (run `make results`)",
            file=sys.stderr,
        )
        return 1
    print(("stale: " if args.check else "rewrote: ") + (", ".join(map(str, stale)) or "nothing"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
