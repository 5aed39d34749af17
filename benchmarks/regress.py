"""Run one regression: a published figure set as data (cf. Anserini / Pyserini's regressions).

    python benchmarks/regress.py benchmarks/regressions/ev-default.yaml [--seeds 0,1] [--work DIR]

A regression file names the data (by path under ``{shared}``, ``../shared/data``), the commands (``setup`` once,
``per_seed`` for each seed), the systems of the table (a per-query CSV of ``graphtx eval citations --per-query`` and
a system label prefix), the references their ratios are taken against, the expected metrics with a tolerance, and
what a run costs on 2 cores and on a GPU. Running it:

* runs each step whose ``creates`` path does not exist yet (so a killed or partial run resumes, finished seeds are
  skipped, and another seed only runs that seed), in ``--work`` (default ``~/.cache/graphtx/regressions/NAME``);
* reads every finished seed's per-query rows and writes ``NAME.json`` beside the YAML: each system's metrics (mean and
  sd over the finished seeds, each seed's value) and its ratio to each reference with a paired-bootstrap 95% interval
  over the seed-averaged queries (benchmarks/compare_runs.py, graphtx/eval/bootstrap.py), the machine, the load,
  each step's time;
* exits 1 when an expected metric is off by more than its tolerance (the JSON says which), 3 when the data is absent.

The tables and figures of README.md, benchmarks/RESULTS.md, docs/results.md and docs/howto/own-corpus.md are
generated from those JSON files (``make results``: benchmarks/results_tables.py); tests/test_regressions.py fails
when a page differs from them.

A step records the command it ran (``WORK/.regress/steps.json``): when the file changes the command (another config,
another flag), the step runs again even though its output exists. A change of graphtx's code does not rerun a step by
itself (a training seed is an hour on 2 cores): delete the work directory's outputs to measure the new code; the JSON
names the commit each step ran at.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # compare_runs, machine: siblings of this script
from compare_runs import group_rows  # noqa: E402

from graphtx.atomic import atomic_write_json  # noqa: E402
from graphtx.eval.bootstrap import paired_ratio  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
METRICS = {"Recall@3": "hits@3", "nDCG@150": None}  # metric -> the per-query numerator of a pair-level metric
EXIT_OFF, EXIT_NO_DATA = 1, 3


def load(path: Path) -> dict:
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    missing = [k for k in ("title", "question", "seeds", "systems", "references") if k not in spec]
    if missing:
        raise SystemExit(f"{path}: missing {', '.join(missing)}")
    names = [s["name"] for s in spec["systems"]]
    unknown = [
        r for r in [*spec["references"], *(r for s in spec["systems"] for r in s.get("vs", ()))] if r not in names
    ]
    if unknown:
        raise SystemExit(f"{path}: references {unknown} are not systems of the file ({names})")
    for part in ("setup", "per_seed"):
        for i, step in enumerate(spec.get(part) or ()):
            lacking = [k for k in ("name", "run", "creates") if not step.get(k)]
            if lacking:  # a step without creates could never be skipped: a resumed run would repeat it, or fail on it
                raise SystemExit(
                    f"{path}: {part} step {i + 1} ({step.get('name', 'unnamed')}) lacks {', '.join(lacking)}"
                )
    steps = step_names(spec)
    repeated = sorted({n for n in steps if steps.count(n) > 1})
    if repeated:  # a step's time and load are recorded under its name: one would overwrite the other's
        raise SystemExit(f"{path}: step names {repeated} are used twice (a per-seed name holds {{seed}})")
    return spec


def step_names(spec: dict) -> list[str]:
    """Every step's name as its time is recorded: the setup's once, each per-seed step's once per seed of the file."""
    setup = [s["name"] for s in spec.get("setup") or ()]
    per_seed = [s["name"].replace("{seed}", str(seed)) for seed in spec["seeds"] for s in spec.get("per_seed") or ()]
    return setup + per_seed


def expand(text: str, places: dict[str, str], seed: int | None = None) -> str:
    return text.format(**places, **({"seed": seed} if seed is not None else {}))


def places_for(spec_path: Path, work: Path, shared: Path) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    graphtx = bin_dir / "graphtx"
    return {
        "shared": str(shared),
        "work": str(work),
        "repo": str(REPO),
        "python": sys.executable,
        "graphtx": str(graphtx) if graphtx.exists() else f"{sys.executable} -m graphtx",
        "name": spec_path.stem,
    }


def run_step(step: dict, places: dict, seed: int | None, times: dict, log) -> None:
    """One command, unless its ``creates`` path exists already from the same command (then it was done: resumed runs skip it)."""
    creates = Path(expand(step["creates"], places, seed))
    label = expand(step.get("name", step["creates"]), places, seed)
    command = expand(step["run"], places, seed)
    stamps_path = Path(places["work"]) / ".regress" / "steps.json"
    stamps = json.loads(stamps_path.read_text()) if stamps_path.is_file() else {}
    if creates.exists() and stamps.get(str(creates), command) == command:
        return
    log(f"== {label}: {command}")
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=REPO)
    seconds = time.perf_counter() - t0
    if done.returncode != 0 or not creates.exists():
        raise SystemExit(
            f"{label}: the command ended with {done.returncode} and {creates} is {'there' if creates.exists() else 'not there'}"
        )
    times[label] = {
        "seconds": round(seconds, 1),
        "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
        "commit": commit(),
    }
    record_stamp(stamps_path, creates, command)
    log(f"   {seconds:.0f} s, load {load0:.2f} -> {os.getloadavg()[0]:.2f}")


def record_stamp(stamps_path: Path, creates: Path, command: str) -> None:
    """Record the command that made ``creates``. Read again under a lock just before writing: another regression run
    in the same work directory (a nested one, or another seed's) may have recorded its steps since this step began,
    and a stamp lost would run that step again."""
    stamps_path.parent.mkdir(parents=True, exist_ok=True)
    with open(stamps_path.with_name(stamps_path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        stamps = json.loads(stamps_path.read_text()) if stamps_path.is_file() else {}
        stamps[str(creates)] = command
        atomic_write_json(stamps_path, stamps)


def commit() -> str:
    """The checkout's commit (with "+changes" when the tree differs from it), or "" outside git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + ("+changes" if dirty else "")


def seed_done(spec: dict, places: dict, seed: int) -> bool:
    return all(Path(expand(s["creates"], places, seed)).exists() for s in spec.get("per_seed", ()))


def summarise(spec: dict, places: dict, seeds: list[int]) -> dict:
    """Per system: metrics over the finished seeds and ratios to each reference (seed-averaged, paired over queries)."""
    groups = {}
    for system in spec.get("systems") or ():  # a speed regression may hold facts only
        specs = [f"{expand(system['csv'], places, s)}:{system['label']}" for s in seeds]
        rows, recalls, ndcgs, label = group_rows(specs)
        groups[system["name"]] = (rows, {"Recall@3": recalls, "nDCG@150": ndcgs}, label)
    out = {}
    for system in spec.get("systems") or ():
        rows, values, label = groups[system["name"]]
        entry = {"label": label, "queries": len(rows), "metrics": {}, "vs": {}}
        for metric, per_seed in values.items():
            entry["metrics"][metric] = {
                "mean": statistics.fmean(per_seed),
                "sd": statistics.stdev(per_seed) if len(per_seed) > 1 else 0.0,
                "per_seed": per_seed,
            }
        for ref in system.get(
            "vs", spec["references"]
        ):  # a system may name its own references (another protocol's rows)
            if ref == system["name"]:
                continue
            ref_rows = groups[ref][0]
            entry["vs"][ref] = {}
            for metric, numerator in METRICS.items():
                ci = paired_ratio(rows, ref_rows, metric, numerator)
                entry["vs"][ref][metric] = {"ratio": ci.ratio, "low": ci.low, "high": ci.high}
        out[system["name"]] = entry
    return out


def read_facts(spec: dict, places: dict) -> dict:
    """``facts: {NAME: JSON file}``: other outputs of the run (a mined set's counts, a training summary) kept verbatim."""
    return {
        name: json.loads(Path(expand(path, places)).read_text()) for name, path in (spec.get("facts") or {}).items()
    }


def check_expected(spec: dict, systems: dict) -> list[str]:
    """The expected metrics that are off by more than the tolerance, in words (empty: all hold)."""
    tol, off = float(spec.get("tolerance", 0.0005)), []
    for name, metrics in (spec.get("expected") or {}).items():
        for metric, want in metrics.items():
            got = systems[name]["metrics"][metric]["mean"]
            if abs(got - float(want)) > tol:
                off.append(f"{name} {metric}: {got:.4f}, expected {float(want):.4f} ± {tol}")
    return off


def run(spec_path: Path, seeds: list[int] | None, work: Path | None, shared: Path, quiet: bool = False) -> int:
    log = (lambda line: None) if quiet else (lambda line: print(line, file=sys.stderr, flush=True))  # noqa: E731
    spec = load(spec_path)
    work = work or Path.home() / ".cache" / "graphtx" / "regressions" / spec_path.stem
    places = places_for(spec_path, work, shared)
    absent = [p for p in (expand(x, places) for x in spec.get("inputs", ())) if not Path(p).exists()]
    if absent:
        print(f"{spec_path.name}: skipped, its data is absent: {', '.join(absent)}", file=sys.stderr)
        return EXIT_NO_DATA
    work.mkdir(parents=True, exist_ok=True)
    result_path = spec_path.with_suffix(".json")
    previous = json.loads(result_path.read_text()) if result_path.is_file() else {}
    times = previous.get("times", {})
    for step in spec.get("setup", ()):
        run_step(step, places, None, times, log)
    for seed in seeds if seeds is not None else spec["seeds"]:
        if seed not in spec["seeds"]:
            raise SystemExit(f"seed {seed} is not one of the file's seeds {spec['seeds']}")
        for step in spec.get("per_seed", ()):
            run_step(step, places, seed, times, log)
    done = [s for s in spec["seeds"] if seed_done(spec, places, s)]
    if not done:
        raise SystemExit(f"{spec_path.name}: no seed has finished")
    systems, steps = summarise(spec, places, done), set(step_names(spec))
    off = check_expected(spec, systems)
    result = {
        "name": spec_path.stem,
        "title": spec["title"],
        "question": spec["question"],
        "seeds": done,
        "seeds_planned": spec["seeds"],
        "systems": systems,
        "references": spec.get("references") or [],
        "facts": read_facts(spec, places),
        "expected_off": off,
        "times": {k: v for k, v in times.items() if k in steps},  # a renamed or dropped step's time goes
        "cost": spec.get("cost", {}),
        "machine": {
            "cores": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "load_at_summary": round(os.getloadavg()[0], 2),
        },
        "commit": commit(),
        "command": f"python benchmarks/regress.py {shlex.quote(str(spec_path.relative_to(REPO)) if spec_path.is_relative_to(REPO) else str(spec_path))}",
    }
    atomic_write_json(result_path, result)
    log(
        f"wrote {result_path}: {len(done)} of {len(spec['seeds'])} seeds"
        + (f"; OFF: {'; '.join(off)}" if off else "; expected metrics hold")
    )
    return EXIT_OFF if off else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("regressions", nargs="+", type=Path, help="benchmarks/regressions/NAME.yaml files")
    ap.add_argument(
        "--seeds", help="comma-separated seeds to run now (default: all of the file's); finished seeds are skipped"
    )
    ap.add_argument(
        "--work", type=Path, help="working directory (default ~/.cache/graphtx/regressions/NAME); one file at a time"
    )
    ap.add_argument(
        "--shared",
        type=Path,
        default=REPO.parent / "shared" / "data",
        help="the shared data folder (default ../shared/data)",
    )
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if args.work and len(args.regressions) > 1:
        raise SystemExit("--work takes one regression file")
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
    codes = [run(p.resolve(), seeds, args.work, args.shared, args.quiet) for p in args.regressions]
    return EXIT_OFF if EXIT_OFF in codes else max(codes)  # a figure off outweighs absent data


if __name__ == "__main__":
    raise SystemExit(main())
