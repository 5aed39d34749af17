"""What readable hits, explanations and the page's SVG graphs cost: /search latency and response size.

One query (claim text) against an index through the service's app (FastAPI TestClient, in process,
no network): plain hits, hits with ``explain`` (node matches, claim chart, ranker signals), and with
``explain`` + ``svg`` (both graphs of every hit drawn, as the web page asks). Median and best of
``--repeats`` requests after one warm-up, and the response size.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_page.py --index INDEX --query graphtx/data/demo/sample_query.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import basics  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="index directory")
    parser.add_argument("--query", required=True, help="file with claim text")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import fastapi
    from fastapi.testclient import TestClient

    from graphtx.config import SearchConfig, ServeConfig
    from graphtx.serve.app import create_app

    print(f"machine: {basics()}; fastapi {fastapi.__version__}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')}; "
          f"load average (1 min) {os.getloadavg()[0]:.2f}\n")  # fmt: skip
    client = TestClient(create_app(args.index, ServeConfig(), SearchConfig()), base_url="http://localhost")
    health = client.get("/healthz").json()
    text = Path(args.query).read_text(encoding="utf-8")
    print(f"index {args.index}: {health['count']} documents, ranker {health['ranker']}; k = {args.k}; {args.repeats} requests each after a warm-up\n")
    client.post("/search", json={"text": text, "k": args.k})
    print("| request | median ms | best ms | response KiB |\n|---|---:|---:|---:|")
    for name, extra in (("hits", {}), ("hits + explain", {"explain": True}), ("hits + explain + svg (the page)", {"explain": True, "svg": True})):
        times, size = [], 0
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            r = client.post("/search", json={"text": text, "k": args.k, **extra})
            times.append((time.perf_counter() - t0) * 1000)
            assert r.status_code == 200, r.text
            size = len(r.content)
        print(f"| {name} | {statistics.median(times):.0f} | {min(times):.0f} | {size / 1024:.0f} |")


if __name__ == "__main__":
    main()
