"""What readable hits, explanations and the page's SVG graphs cost: request latency and response size.

One query (claim text) against an index through the service's app (FastAPI TestClient, in process,
no network). The page asks in three steps: the hit list (/search, no explanations: shown at once), the
page's claim charts (/explain, the same body), and a hit's two graphs when the searcher opens them
(/explain for one document with ``svg``). Beside them, what one request for everything costs (the
page's request before issue 26: /search with ``explain`` + ``svg``). Median and best of
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

    print(
        f"machine: {basics()}; fastapi {fastapi.__version__}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')}; "
        f"load average (1 min) {os.getloadavg()[0]:.2f}\n"
    )
    client = TestClient(create_app(args.index, ServeConfig(), SearchConfig()), base_url="http://localhost")
    health = client.get("/healthz").json()
    text = Path(args.query).read_text(encoding="utf-8")
    print(
        f"index {args.index}: {health['count']} documents, ranker {health['ranker']}; k = {args.k}; {args.repeats} requests each after a warm-up\n"
    )
    client.post("/search", json={"text": text, "k": args.k})
    print("| request | median ms | best ms | response KiB |\n|---|---:|---:|---:|")
    first = client.post("/search", json={"text": text, "k": args.k}).json()["hits"][0]["doc_id"]
    client.post(
        "/explain", json={"text": text, "k": args.k}
    )  # warm-up: the found-threshold calibration happens once per open index
    requests = (
        ("1. hit list (/search): shown at once", "/search", {"k": args.k}),
        ("2. the page's claim charts (/explain)", "/explain", {"k": args.k}),
        ("3. one hit's graphs, when opened (/explain, svg)", "/explain", {"doc_ids": [first], "svg": True}),
        (
            "all at once (/search explain + svg: the page before)",
            "/search",
            {"k": args.k, "explain": True, "svg": True},
        ),
    )
    for name, path, extra in requests:
        times, size = [], 0
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            r = client.post(path, json={"text": text, **extra})
            times.append((time.perf_counter() - t0) * 1000)
            assert r.status_code == 200, r.text
            size = len(r.content)
        print(f"| {name} | {statistics.median(times):.0f} | {min(times):.0f} | {size / 1024:.0f} |")


if __name__ == "__main__":
    main()
