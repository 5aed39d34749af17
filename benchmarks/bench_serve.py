"""Load test of `graphtx serve` on loopback: latency percentiles, throughput, errors, memory.

Backs benchmarks/results/speed-serve.md "Serve": the service answers a mixed stream of requests at a few
concurrency levels, with bounded request count and duration, and survives it (``/healthz``
still answers, the process is alive, its memory is reported before and after).

The server is started as a subprocess (``graphtx serve --index INDEX --port PORT``), the
client is httpx with one connection per worker thread. Each worker sends requests drawn
(seeded) from this mix, until ``--requests`` in all or ``--duration`` seconds per level:

* ``search``  POST /search, a claim text (the first claims / abstracts of ``--corpus``), k = 10
* ``hybrid``  the same with BM25 fusion
* ``id``      POST /search {"id": ...}, k = 10 (no parsing)
* ``explain`` POST /search with explain, k = 3
* ``doc``     GET /documents/{id}
* ``bad``     a request the service must refuse with a 4xx (k too large, unknown id, malformed
              JSON, oversized body): counted as an error unless the answer is the expected 4xx

An error is a transport failure, a 5xx, or any answer other than the expected one.

    python benchmarks/bench_serve.py --index INDEX_DIR --corpus CORPUS_DIR --concurrency 1 4 --requests 300 --duration 120
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from machine import cpu_model
from memory import rss_mib

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MIX = {"search": 0.45, "hybrid": 0.15, "id": 0.15, "explain": 0.05, "doc": 0.15, "bad": 0.05}


def machine() -> str:
    import fastapi
    import httpx
    import uvicorn

    cpu = cpu_model()
    return (
        f"{cpu}; {os.cpu_count()} cores; Python {platform.python_version()}; fastapi {fastapi.__version__}, uvicorn {uvicorn.__version__}, "
        f"httpx {httpx.__version__}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; "
        f"load average (1 min) at the start {os.getloadavg()[0]:.2f}"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query_texts(corpus: str | None, limit: int) -> list[str]:
    if not corpus:
        return []
    from graphtx.corpus.store import iter_documents

    texts = []
    for doc in iter_documents(corpus):
        text = doc.first_claim or doc.abstract
        if text.strip():
            texts.append(text[:4000])
        if len(texts) >= limit:
            break
    return texts


def bad_request(rng: random.Random, base: str) -> tuple[str, str, dict, int]:
    """(method, url, httpx kwargs, expected status)."""
    kind = rng.choice(["k", "id", "json", "size"])
    if kind == "k":
        return "POST", f"{base}/search", {"json": {"id": "x", "k": 10_000}}, 400
    if kind == "id":
        return "POST", f"{base}/search", {"json": {"id": "NO-SUCH-DOCUMENT"}}, 404
    if kind == "json":
        return "POST", f"{base}/search", {"content": b"{not json", "headers": {"content-type": "application/json"}}, 422
    return (
        "POST",
        f"{base}/search",
        {"content": b"{" + b" " * 200_000 + b"}", "headers": {"content-type": "application/json"}},
        413,
    )


def mix(texts: list[str]) -> tuple[list[str], list[float]]:
    """The request kinds and their weights; without query texts, id queries stand in for text queries."""
    if not texts:
        return list(MIX), [0 if k in ("search", "hybrid", "explain") else w for k, w in MIX.items()]
    return list(MIX), list(MIX.values())


def request_for(
    kind: str, rng: random.Random, base: str, texts: list[str], ids: list[str]
) -> tuple[str, str, dict, int]:
    """One request of ``kind`` from the mix: (method, url, httpx kwargs, expected status)."""
    if kind in ("search", "hybrid", "explain"):
        body = {
            "text": rng.choice(texts),
            "k": 3 if kind == "explain" else 10,
            "hybrid": kind == "hybrid",
            "explain": kind == "explain",
        }
        return "POST", f"{base}/search", {"json": body}, 200
    if kind == "id":
        return "POST", f"{base}/search", {"json": {"id": rng.choice(ids), "k": 10}}, 200
    if kind == "doc":
        return "GET", f"{base}/documents/{rng.choice(ids)}", {}, 200
    return bad_request(rng, base)


def percentiles(ms: list[float]) -> list[float]:
    """[p50, p95, p99] in ms, rounded to 0.1; [] for no samples."""
    return [round(float(np.percentile(ms, p)), 1) for p in (50, 95, 99)] if ms else []


def index_ids(index: str) -> tuple[dict, list[str]]:
    """The index's manifest and its document ids."""
    import pyarrow.parquet as pq

    manifest = json.loads((Path(index) / "manifest.json").read_text())
    ids = pq.read_table(Path(index) / manifest["ids_file"], columns=["doc_id"]).column("doc_id").to_pylist()
    return manifest, ids


def start_server(index: str, port: int, *extra: str, stderr=subprocess.PIPE) -> subprocess.Popen:
    """``graphtx serve --index INDEX --port PORT --quiet EXTRA...`` as a subprocess (loopback, the default host)."""
    cmd = [sys.executable, "-m", "graphtx.cli", "serve", "--index", index, "--port", str(port), "--quiet", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, cwd=REPO)


def wait_healthy(server: subprocess.Popen, base: str, timeout: float) -> float:
    """Seconds until ``/healthz`` answers 200; SystemExit when the server exits or does not answer in time."""
    import httpx

    t0 = time.time()
    while True:
        if server.poll() is not None:
            tail = server.stderr.read().decode()[-3000:] if server.stderr else ""
            raise SystemExit(f"server exited with {server.returncode}: {tail}")
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return time.time() - t0
        except httpx.HTTPError:
            pass
        if time.time() - t0 > timeout:
            raise SystemExit("server did not answer /healthz in time")
        time.sleep(0.2)


def stop_server(server: subprocess.Popen, timeout: float = 30.0) -> None:
    """SIGTERM (uvicorn shuts down cleanly), SIGKILL after ``timeout`` seconds."""
    if server.poll() is None:
        server.terminate()
    try:
        server.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def run_level(
    base: str, concurrency: int, requests: int, duration: float, texts: list[str], ids: list[str], seed: int
) -> dict:
    import httpx

    lock = threading.Lock()
    sent = [0]
    results: list[tuple[str, float, bool, str]] = []  # (kind, ms, ok, detail)
    deadline = time.time() + duration
    kinds, weights = mix(texts)

    def worker(w: int) -> None:
        rng = random.Random(seed * 1000 + w)
        with httpx.Client(timeout=60.0) as client:
            while time.time() < deadline:
                with lock:
                    if sent[0] >= requests:
                        return
                    sent[0] += 1
                kind = rng.choices(kinds, weights)[0]
                method, url, kw, expected = request_for(kind, rng, base, texts, ids)
                t0 = time.perf_counter()
                try:
                    r = client.request(method, url, **kw)
                    ok, detail = r.status_code == expected, f"{r.status_code}"
                except httpx.HTTPError as err:
                    ok, detail = False, type(err).__name__
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    results.append((kind, ms, ok, detail))

    started = time.time()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - started
    out = {
        "concurrency": concurrency,
        "requests": len(results),
        "seconds": round(wall, 1),
        "throughput": round(len(results) / wall, 2),
    }
    out["errors"] = sum(1 for r in results if not r[2])
    out["error_details"] = sorted({f"{k}:{d}" for k, _, ok, d in results if not ok})
    all_ms = [ms for _, ms, _, _ in results]
    out["all"] = percentiles(all_ms)
    out["by_kind"] = {}
    for kind in kinds:
        ms = [m for k, m, _, _ in results if k == kind]
        if ms:
            out["by_kind"][kind] = {"n": len(ms), "p": percentiles(ms)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--corpus", help="corpus directory: its first claims (or abstracts) are the query texts")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--requests", type=int, default=300, help="requests per concurrency level (at most)")
    ap.add_argument("--duration", type=float, default=120.0, help="seconds per concurrency level (at most)")
    ap.add_argument("--texts", type=int, default=500, help="query texts taken from the corpus")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--startup-timeout", type=float, default=180.0)
    args = ap.parse_args()

    import httpx

    print(f"machine: {machine()}\n")
    manifest, ids = index_ids(args.index)
    texts = query_texts(args.corpus, args.texts)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(args.index, port)
    try:
        startup = wait_healthy(server, base, args.startup_timeout)
        # warm-up: loads spaCy and BM25 (first-use costs are reported by bench_search.py)
        if texts:
            httpx.post(f"{base}/search", json={"text": texts[0], "hybrid": True}, timeout=120)
        rss_before = rss_mib(server.pid)
        levels = [run_level(base, c, args.requests, args.duration, texts, ids, args.seed) for c in args.concurrency]
        health = httpx.get(f"{base}/healthz", timeout=10)
        alive = server.poll() is None and health.status_code == 200
        rss_after = rss_mib(server.pid)
    finally:
        stop_server(server)

    print(
        f"index {args.index}: {manifest['count']} documents, {manifest['dim']}-d, {manifest['index_type']}; "
        f"{len(texts)} query texts from {args.corpus}; mix {MIX}; server up in {startup:.1f} s; "
        f"server RSS {rss_before:.0f} MiB after warm-up, {rss_after:.0f} MiB after the load; "
        f"alive and healthy after the load: {'yes' if alive else 'NO'}\n"
    )
    print("| concurrency | requests | seconds | req/s | errors | p50 ms | p95 ms | p99 ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in levels:
        p = r["all"] or ["-"] * 3
        print(
            f"| {r['concurrency']} | {r['requests']} | {r['seconds']} | {r['throughput']} | {r['errors']} | {p[0]} | {p[1]} | {p[2]} |"
        )
    print("\nby request kind (p50 / p95 / p99 ms):\n")
    print("| concurrency | " + " | ".join(MIX) + " |")
    print("|---:|" + "---|" * len(MIX))
    for r in levels:
        cells = [
            f"{v['p'][0]} / {v['p'][1]} / {v['p'][2]} ({v['n']})" if (v := r["by_kind"].get(k)) else "-" for k in MIX
        ]
        print(f"| {r['concurrency']} | " + " | ".join(cells) + " |")
    errors = [d for r in levels for d in r["error_details"]]
    if errors:
        print(f"\nerrors: {errors}")
    if not alive:
        sys.exit(1)


if __name__ == "__main__":
    main()
