"""Regressions as data (benchmarks/regress.py) and the results pages generated from them (benchmarks/results_tables.py)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from graphtx.config import REPO_ROOT

BENCH = REPO_ROOT / "benchmarks"
SHARED = REPO_ROOT.parent / "shared" / "data"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


regress = _script("regress")
results_tables = _script("results_tables")


def _csv(path: Path, system: str, rows: list[tuple[str, int, int, float]]) -> None:
    """Per-query rows as `graphtx eval citations --per-query` writes them: (query, relevant, hits@3, nDCG@150)."""
    with path.open("a", encoding="utf-8") as f:
        if f.tell() == 0:
            f.write("system,query,relevant,hits@3,Recall@3,nDCG@150\n")
        for q, rel, hits, ndcg in rows:
            f.write(f'"{system}",{q},{rel},{hits},{hits / rel},{ndcg}\n')


def _spec(tmp_path: Path, **extra) -> Path:
    spec = {
        "title": "toy",
        "question": "quality",
        "seeds": [0, 1],
        "cost": {"cpu": "1 s"},
        "per_seed": [
            {
                "name": "seed {seed}",
                "run": "echo run {seed} >> {work}/ran.txt && cp {work}/src-{seed}.csv {work}/s{seed}.csv",
                "creates": "{work}/s{seed}.csv",
            }
        ],
        "systems": [
            {"name": "ours", "csv": "{work}/s{seed}.csv", "label": "graphtx"},
            {"name": "BM25", "csv": "{work}/s{seed}.csv", "label": "BM25"},
        ],
        "references": ["BM25"],
        **extra,
    }
    path = tmp_path / "toy.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.timeout(60)
def test_every_shipped_regression_file_is_well_formed():
    files = sorted((BENCH / "regressions").glob("*.yaml"))
    assert len(files) > 10
    for path in files:  # each step named, with its command and the path that marks it done; references are systems
        regress.load(path)


@pytest.mark.timeout(60)
def test_a_step_without_the_path_it_creates_is_refused(tmp_path):
    spec = {
        "title": "t",
        "question": "quality",
        "seeds": [0],
        "references": ["a"],
        "systems": [{"name": "a", "csv": "x", "label": "a"}],
    }
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({**spec, "setup": [{"name": "check", "run": "true"}]}))
    with pytest.raises(SystemExit, match=r"setup step 1 \(check\) lacks creates"):
        regress.load(path)
    path.write_text(yaml.safe_dump({**spec, "per_seed": [{"name": "go", "run": "true", "creates": "{work}/done"}]}))
    assert regress.load(path)["per_seed"][0]["creates"] == "{work}/done"
    twice = [{"name": "go", "run": "true", "creates": f"{{work}}/done{i}"} for i in range(2)]
    path.write_text(yaml.safe_dump({**spec, "per_seed": twice}))
    with pytest.raises(SystemExit, match=r"step names \['go'\] are used twice"):
        regress.load(path)
    one_name = [{"name": "go", "run": "true", "creates": "{work}/done{seed}"}]  # the same name for seeds 0 and 1
    path.write_text(yaml.safe_dump({**spec, "seeds": [0, 1], "per_seed": one_name}))
    with pytest.raises(SystemExit, match=r"step names \['go'\] are used twice"):
        regress.load(path)


def test_a_regression_runs_each_seed_once_and_writes_its_metrics_and_ratios(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for seed, ours_hits in ((0, (1, 2)), (1, (0, 2))):
        _csv(work / f"src-{seed}.csv", "BM25 (k1 1.5, b 0.75)", [("q1", 1, 0, 0.2), ("q2", 2, 1, 0.5)])
        _csv(work / f"src-{seed}.csv", "graphtx (small)", [("q1", 1, ours_hits[0], 0.4), ("q2", 2, ours_hits[1], 0.5)])
    path = _spec(tmp_path)
    assert regress.run(path, [0], work, SHARED, quiet=True) == 0
    r = json.loads(path.with_suffix(".json").read_text())
    assert r["seeds"] == [0] and r["seeds_planned"] == [0, 1]
    assert r["systems"]["ours"]["metrics"]["Recall@3"]["mean"] == 1.0 and r["systems"]["BM25"]["metrics"]["Recall@3"][
        "mean"
    ] == pytest.approx(1 / 3)
    assert (
        r["systems"]["ours"]["vs"]["BM25"]["Recall@3"]["ratio"] == pytest.approx(3.0)
        and r["systems"]["BM25"]["vs"] == {}
    )
    stale = {**r, "times": {**r["times"], "a step since renamed": {"seconds": 1.0}}}
    path.with_suffix(".json").write_text(json.dumps(stale))
    assert regress.run(path, None, work, SHARED, quiet=True) == 0  # seed 0 is finished: only seed 1 runs
    assert (work / "ran.txt").read_text().split("\n")[:2] == ["run 0", "run 1"]
    r = json.loads(path.with_suffix(".json").read_text())
    ours = r["systems"]["ours"]["metrics"]["Recall@3"]
    assert r["seeds"] == [0, 1] and ours["per_seed"] == [1.0, pytest.approx(2 / 3)] and ours["sd"] > 0
    assert set(r["times"]) == {"seed 0", "seed 1"}  # the renamed step's time is gone, each seed's kept
    # the seed-averaged per-query hits: (0.5 + 2) / (1/3 * 3 per seed): 2.5 / 1 = 2.5
    assert r["systems"]["ours"]["vs"]["BM25"]["Recall@3"]["ratio"] == pytest.approx(2.5)


def test_an_expected_metric_off_by_more_than_its_tolerance_fails_the_regression(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for seed in (0, 1):
        _csv(work / f"src-{seed}.csv", "BM25", [("q1", 1, 1, 0.5)])
        _csv(work / f"src-{seed}.csv", "graphtx", [("q1", 1, 1, 0.5)])
    path = _spec(tmp_path, expected={"BM25": {"Recall@3": 0.9}}, tolerance=0.01)
    assert regress.run(path, None, work, SHARED, quiet=True) == regress.EXIT_OFF
    assert json.loads(path.with_suffix(".json").read_text())["expected_off"] == [
        "BM25 Recall@3: 1.0000, expected 0.9000 ± 0.01"
    ]
    absent = _spec(tmp_path, inputs=["{shared}/no-such-data"])
    assert regress.run(absent, None, work, SHARED, quiet=True) == regress.EXIT_NO_DATA


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "name", sorted(p.stem for p in (BENCH / "regressions").glob("*.yaml") if yaml.safe_load(p.read_text()).get("cheap"))
)
def test_the_cheap_regressions_hold(name, tmp_path):
    spec = yaml.safe_load((BENCH / "regressions" / f"{name}.yaml").read_text())
    missing = [p for p in spec.get("inputs", ()) if not Path(p.format(shared=SHARED)).exists()]
    if missing:
        pytest.skip(f"needs {missing[0].format(shared=SHARED)}")
    copy = tmp_path / f"{name}.yaml"  # the committed JSON stays as it is
    shutil.copy(BENCH / "regressions" / f"{name}.yaml", copy)
    assert regress.run(copy, None, tmp_path / "work", SHARED, quiet=True) == 0, json.loads(
        copy.with_suffix(".json").read_text()
    )["expected_off"]
    fresh = json.loads(copy.with_suffix(".json").read_text())
    committed = json.loads((BENCH / "regressions" / f"{name}.json").read_text())
    for system, s in committed["systems"].items():  # the committed figures are what the regression gives
        for metric, v in s["metrics"].items():
            assert fresh["systems"][system]["metrics"][metric]["mean"] == pytest.approx(v["mean"], abs=1e-4), (
                system,
                metric,
            )


def test_the_results_pages_are_what_the_regressions_give(monkeypatch, tmp_path):
    """Every generated table and number of README.md, benchmarks/RESULTS.md and docs/results.md equals its JSON; without a
    JSON the check fails."""
    assert results_tables.main.__module__ == "results_tables"
    monkeypatch.setattr(sys, "argv", ["results_tables.py", "--check"])
    assert results_tables.main() == 0
    names = {m.group("name") for page in results_tables.PAGES for m in results_tables.TABLE.finditer(page.read_text())}
    assert names, "the pages hold generated tables"
    copy = tmp_path / "regressions"
    shutil.copytree(BENCH / "regressions", copy)
    (copy / f"{sorted(names)[0]}.json").unlink()
    monkeypatch.setattr(results_tables, "REGRESSIONS", copy)
    assert results_tables.main() == 1


def test_a_page_number_differing_from_its_json_is_found(tmp_path):
    cache: dict = {}
    name = "bm25-ev"
    page = tmp_path / "page.md"
    good = results_tables.render(page, f"BM25 scores <!-- v: {name}|BM25|Recall@3 -->x<!-- /v -->.", cache)
    assert good == f"BM25 scores <!-- v: {name}|BM25|Recall@3 -->0.1089<!-- /v -->."
    table = results_tables.render(page, f"<!-- table: {name} -->\nold\n<!-- /table -->", cache)
    assert "| TF-IDF | 1 | 257 | 0.0787 | 0.2450 | 0.72x [" in table and "regressions/bm25-ev.yaml" in table


def test_a_value_in_a_table_row_takes_escaped_separators(tmp_path):
    text = results_tables.render(tmp_path / "p.md", "| BM25 | <!-- v: bm25-ev\\|BM25\\|Recall@3 -->x<!-- /v --> |", {})
    assert text == "| BM25 | <!-- v: bm25-ev\\|BM25\\|Recall@3 -->0.1089<!-- /v --> |"


def _cells(row: str) -> int:
    """A Markdown table row's cells: split at every | not escaped as \\| (a comment's | splits too)."""
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return len(re.split(r"(?<!\\)\|", body))


def test_every_table_row_of_the_results_pages_has_its_header_s_cells():
    """A bare | inside a generated value's comment would split its cell: the value would not show where it belongs."""
    for page in results_tables.PAGES:
        header = None
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if not line.lstrip().startswith("|"):
                header = None
                continue
            if header is None:
                header = _cells(line)
            else:
                assert _cells(line) == header, f"{page.name}:{number} has {_cells(line)} cells, its header {header}"


def test_seed_and_query_counts_are_read_from_the_json(tmp_path):
    text = results_tables.render(
        tmp_path / "p.md",
        "<!-- v: bm25-ev|seeds -->3<!-- /v --> seed, <!-- v: bm25-ev|BM25|queries -->9<!-- /v -->",
        {},
    )
    assert text == "<!-- v: bm25-ev|seeds -->1<!-- /v --> seed, <!-- v: bm25-ev|BM25|queries -->257<!-- /v -->"


def test_a_table_may_name_the_systems_it_shows(tmp_path):
    cache: dict = {}
    page = tmp_path / "page.md"
    text = results_tables.render(page, "<!-- table: bm25-ev | TF-IDF; BM25 -->\n<!-- /table -->", cache)
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| system")]
    assert [r.split(" | ")[0] for r in rows] == ["| TF-IDF", "| BM25"]
    with pytest.raises(KeyError, match="no system 'nope'"):
        results_tables.render(page, "<!-- table: bm25-ev | nope -->\n<!-- /table -->", cache)


def test_a_table_may_name_the_references_it_shows(tmp_path):
    text = results_tables.render(tmp_path / "p.md", "<!-- table: bm25-ev | TF-IDF; vs=BM25 -->\n<!-- /table -->", {})
    head = next(line for line in text.splitlines() if line.startswith("| system"))
    assert head.count("/ BM25 [95%]") == 2 and "paper" not in head


@pytest.mark.timeout(60)
def test_a_step_keeps_the_stamps_another_run_recorded_while_it_ran(tmp_path):
    """Two regression runs share WORK/.regress/steps.json (a nested run, another seed's): a step's stamp is written
    over what the file holds when the step ends, not what it held when the step began, or the other run's steps
    would run again."""
    work = tmp_path / "work"
    stamps = work / ".regress" / "steps.json"
    stamps.parent.mkdir(parents=True)
    stamps.write_text(json.dumps({"before": "cmd0"}))
    other = tmp_path / "other.json"  # what the other run records while this step runs
    other.write_text(json.dumps({"before": "cmd0", "other": "cmd1"}))
    step = {"name": "s", "run": f"cp {other} {stamps} && touch {{work}}/out", "creates": "{work}/out"}
    regress.run_step(step, {"work": str(work)}, None, {}, lambda line: None)
    recorded = json.loads(stamps.read_text())
    assert recorded["before"] == "cmd0" and recorded["other"] == "cmd1" and recorded[str(work / "out")].endswith("/out")
