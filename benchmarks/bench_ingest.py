"""Ingest throughput and memory against corpus size (streaming: memory must stay flat).

Backs the claim in benchmarks/results/speed-ingest.md "Ingest": records/s per worker setting, and peak
memory that does not grow with the number of records.

    python benchmarks/bench_ingest.py --grants ../shared/data/uspto-grants --copies 1 10 --workers 1 2

The input is a weekly-style file made by concatenating the shared US grants ``copies``
times (doc numbers rewritten so every copy is a new document). Each measurement runs in a
fresh subprocess so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import basics

CHILD = r"""
import json, resource, sys, time
from graphtx.config import IngestConfig
from graphtx.corpus.ingest import ingest
src, out, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = time.perf_counter()
r = ingest([src], out, IngestConfig(workers=workers), progress=False)
s = time.perf_counter() - t
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"records": r.records_seen, "documents": r.documents, "skipped": r.skipped, "seconds": s,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "worker_peak_mib": children / 1024}))
"""


def make_input(grants: Path, copies: int, out: Path) -> int:
    records = [r for f in sorted(grants.glob("*.xml")) for r in re.split(rb"(?=<\?xml)", f.read_bytes()) if r.strip()]
    with open(out, "wb") as f:
        for c in range(copies):
            for r in records:
                # a new document number per copy: "<doc-number>D0651432</doc-number>" -> "...D0651432C3"
                f.write(
                    re.sub(
                        rb"(<publication-reference>.*?<doc-number>)([^<]+)",
                        lambda m: m.group(1) + m.group(2) + b"C%d" % c,
                        r,
                        count=1,
                        flags=re.S,
                    )
                )
    return out.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grants", required=True, type=Path)
    ap.add_argument("--copies", type=int, nargs="+", default=[1, 10])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    print(f"machine: {basics()}")
    print()
    print("| input | size MiB | workers | records | records/s | peak RSS main MiB | peak RSS worker MiB |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for copies in args.copies:
            src = Path(tmp) / f"ipg_x{copies}.xml"
            size = make_input(args.grants, copies, src)
            for workers in args.workers:
                out = Path(tmp) / f"corpus_{copies}_{workers}"
                res = subprocess.run(
                    [sys.executable, "-c", CHILD, str(src), str(out), str(workers)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                r = json.loads(res.stdout.strip().splitlines()[-1])
                print(
                    f"| {copies}× shared US grants | {size / 2**20:.0f} | {workers} | {r['records']} | {r['records'] / r['seconds']:.0f} | "
                    f"{r['peak_mib']:.0f} | {r['worker_peak_mib']:.0f} |"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
