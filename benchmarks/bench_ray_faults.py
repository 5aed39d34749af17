"""Ray fault injection, repeated over seeds, as a report (issue 50): each fault of tests/test_ray_engine.py and
tests/train/test_ray_train.py run for ``--seeds`` seeds on a local Ray, one row a fault.

    python benchmarks/bench_ray_faults.py [--seeds 10] [--faults parse,encode,index,merge,train,maps] [--out DIR]

Each fault is a parametrized test (the seed picks the moment of the kill); what each checks, and what holds, is in
docs/guide/reliability.md. The report prints the machine, and for each fault the seeds passed, the failures by seed,
the wall time and the 1-minute load before and after; it writes DIR/ray_faults.md and DIR/ray_faults.json with
pytest's JUnit XML beside them, and exits 1 when any seed failed. Needs the extra graphtx[ray]; CPU-heavy: run it
alone on the machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from machine import basics

from graphtx.build.run import machine_load

REPO = Path(__file__).resolve().parents[1]
FAULTS = {  # name -> (what is killed, test node ids without the seed)
    "parse": (
        "one Ray stage actor SIGKILLed mid-shard of parse",
        ["tests/test_ray_engine.py::test_parse_on_ray_with_an_actor_killed"],
    ),
    "encode": (
        "one Ray stage actor SIGKILLed mid-chunk of encode",
        ["tests/test_ray_engine.py::test_encode_on_ray_with_an_actor_killed"],
    ),
    "index": (
        "one Ray stage actor SIGKILLed mid-shard of index",
        ["tests/test_ray_engine.py::test_index_on_ray_with_an_actor_killed"],
    ),
    "merge": (
        "the index driver killed during the merge of its shards on disk",
        ["tests/test_ray_engine.py::test_index_driver_killed_during_the_merge_on_disk_finishes_on_the_same_command"],
    ),
    "train": (
        "one Ray Train worker SIGKILLed mid-epoch",
        ["tests/train/test_ray_train.py::test_ray_train_with_a_worker_killed_mid_epoch_resumes_to_the_same_run"],
    ),
    "maps": (
        "a Ray actor killed at a seeded task of the engine's two maps",
        [
            "tests/test_ray_engine.py::test_map_unordered_with_an_actor_killed_gives_every_result_once",
            "tests/test_ray_engine.py::test_map_ordered_with_an_actor_killed_keeps_the_order",
        ],
    ),
}


def run_fault(name: str, seeds: int, out: Path) -> dict:
    what, tests = FAULTS[name]
    ids = [f"{t}[{s}]" for t in tests for s in range(seeds)]
    xml = out / f"{name}.xml"
    started, load_before = time.time(), machine_load()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "slow", "-p", "no:cacheprovider", f"--junitxml={xml}", *ids],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    seconds, load_after = round(time.time() - started, 1), machine_load()
    failed, passed = [], 0
    if xml.is_file():
        for case in ET.parse(xml).getroot().iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed.append(case.get("name", "?"))
            elif case.find("skipped") is None:
                passed += 1
    return {
        "fault": name,
        "what": what,
        "runs": len(ids),
        "passed": passed,
        "failed": failed,
        "seconds": seconds,
        "load": [load_before, load_after],
        "pytest_exit": done.returncode,
        "tail": done.stdout[-2000:] if failed or done.returncode else "",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10, help="seeds a fault (0..N-1; the tests have 10)")
    ap.add_argument("--faults", default=",".join(FAULTS), help=f"comma-separated, of {', '.join(FAULTS)}")
    ap.add_argument("--out", default="ray-faults", help="directory for ray_faults.md, ray_faults.json, JUnit XML")
    args = ap.parse_args()
    names = [f for f in args.faults.split(",") if f]
    unknown = [f for f in names if f not in FAULTS]
    if unknown or not 1 <= args.seeds <= 10:
        print(f"unknown faults {unknown} or --seeds outside 1-10", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in names:
        print(f"{name}: {args.seeds} seeds ...", file=sys.stderr, flush=True)
        rows.append(run_fault(name, args.seeds, out))
        r = rows[-1]
        print(
            f"{name}: {r['passed']} of {r['runs']} in {r['seconds']} s (load {r['load'][0]}-{r['load'][1]})",
            file=sys.stderr,
        )
    lines = [
        "# Ray fault injection",
        "",
        f"machine: {basics()}",
        "",
        "| fault | what is killed | runs | passed | failed (seed) | seconds | load before-after |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    for r in rows:
        failed = ", ".join(f.split("[")[-1].rstrip("]") for f in r["failed"]) or "none"
        lines.append(
            f"| {r['fault']} | {r['what']} | {r['runs']} | {r['passed']} | {failed} | {r['seconds']} | {r['load'][0]}-{r['load'][1]} |"
        )
    ok = all(not r["failed"] and r["passed"] == r["runs"] for r in rows)
    lines += ["", f"verdict: {'PASS' if ok else 'FAIL'}"]
    (out / "ray_faults.md").write_text("\n".join(lines) + "\n")
    (out / "ray_faults.json").write_text(json.dumps({"machine": basics(), "seeds": args.seeds, "rows": rows}, indent=1))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
