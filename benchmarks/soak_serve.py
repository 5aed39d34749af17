"""Soak test of `graphtx serve` at its admission limit: memory, threads, descriptors and latency over time.

Issue 50: the service must hold up for an hour with more clients than it admits. The server is
started as a subprocess on a free loopback port (``graphtx serve --index INDEX --config
DIR/serve.yaml``, the YAML setting only ``serve.max_pending``), and ``--concurrency`` client threads
(default max_pending + 8, so the bound is really hit) send bench_serve.py's seeded mix of
requests (claim search, hybrid, id search, explain, document, bad requests that must get their
4xx) for ``--minutes`` minutes, at most ``--max-requests`` in all. A 503 is the admission bound
at work: the client waits its Retry-After and goes on. The server is stopped at the end (SIGTERM,
SIGKILL after 30 s), on Ctrl-C too, and no process of it is left behind.

Every window (``--window-s``: 60 s, 10 s for runs under 3 minutes) records the server's RSS,
thread count and open file descriptors (psutil), the requests per second, the share of 503s,
the unexpected answers (anything but a 2xx, a 503, or a bad request's expected 4xx; transport
errors and time-outs included) and p50 / p95 / p99 latency of the window's answered requests
(those that got an answer other than 503: the ones the service took in, or refused as invalid).

Verdict (exit code 1 when a condition fails); warm-up = the first minute, or the first 20 % of a
run under 3 minutes, in whole windows:

* (a) memory: RSS at the end grows less than 10 % over RSS at the end of the warm-up
* (b) answers: no unexpected answer in the whole run (warm-up included)
* (c) latency: p95 of the last window at most 20 % above p95 of the first window after the
      warm-up (a faster last window passes: the condition is about degradation)

Writes DIR/soak.json (machine line with the load average at start and end, settings, rows,
verdict), DIR/soak.md (the rows as a table, the verdict lines), DIR/soak.png (RSS, p95 and 503
share against minutes; needs matplotlib, else no plot and a note) and DIR/server.log (its stderr).

    python benchmarks/soak_serve.py --index INDEX --minutes 60 --out DIR [--corpus CORPUS] [--concurrency C] [--seed S] [--max-pending P]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from bench_serve import (
    MIX,
    free_port,
    index_ids,
    machine,
    mix,
    percentiles,
    query_texts,
    request_for,
    start_server,
    stop_server,
    wait_healthy,
)

RSS_GROWTH = 0.10  # (a): RSS may grow less than this over the run after warm-up
P95_DRIFT = 0.20  # (c): the last window's p95 may be at most this much above the first after warm-up
CLIENT_TIMEOUT_S = 60.0  # a request without an answer by then is a transport error (unexpected)
MAX_RETRY_AFTER_S = 5.0  # a client waits Retry-After seconds after a 503, at most this


# --- pure parts: windows, rows, verdict (tests/test_soak_verdict.py) --------------------------------


def window_seconds(minutes: float, window_s: float | None) -> float:
    """The window length: as given, else 60 s, or 10 s for a run under 3 minutes (so it still has several rows)."""
    if window_s is not None:
        return float(window_s)
    return 60.0 if minutes >= 3 else 10.0


def warmup_rows(n_rows: int, window_s: float, run_s: float) -> int:
    """Leading rows that are warm-up: the first minute, or the first 20 % of a run under 3 minutes, in whole windows
    (at least one; never all of them when there are two or more, so a one-window run has nothing to judge)."""
    warm_s = 60.0 if run_s >= 180 else 0.2 * run_s
    return min(max(1, round(warm_s / window_s)), n_rows - 1) if n_rows >= 2 else n_rows


def outcome(status: int | None, expected: int) -> str:
    """'ok', 'busy' (503) or 'unexpected' for one answer; ``None`` is a transport error. A request expecting 200 may
    get any 2xx; a bad request must get exactly its 4xx."""
    if status is None:
        return "unexpected"
    if status == 503:
        return "busy"
    if (200 <= status < 300) if expected < 300 else status == expected:
        return "ok"
    return "unexpected"


def make_row(
    window: int, t_end: float, seconds: float, results: list[tuple[int | None, float, str, str]], sample: dict
) -> dict:
    """One window's row from its completed requests ``(status or None, ms, outcome, detail)`` and the server's
    ``sample`` (rss_mib, threads, fds; None where the process was gone). Latency: the answered requests (a status
    other than 503)."""
    answered = [ms for status, ms, _, _ in results if status is not None and status != 503]
    busy = sum(1 for _, _, oc, _ in results if oc == "busy")
    unexpected = Counter(detail for _, _, oc, detail in results if oc == "unexpected")
    p = percentiles(answered) or [None] * 3
    return {
        "window": window,
        "t_end_s": round(t_end, 1),
        "seconds": round(seconds, 1),
        "rss_mib": sample.get("rss_mib"),
        "threads": sample.get("threads"),
        "fds": sample.get("fds"),
        "requests": len(results),
        "answered": len(answered),
        "rps": round(len(results) / seconds, 2) if seconds > 0 else None,
        "share_503": round(busy / len(results), 4) if results else None,
        "unexpected": sum(unexpected.values()),
        "unexpected_details": dict(unexpected.most_common(10)),
        "p50_ms": p[0],
        "p95_ms": p[1],
        "p99_ms": p[2],
    }


def verdict(rows: list[dict], warmup: int) -> dict:
    """The three conditions over the rows (each with rss_mib, unexpected, p95_ms); ``warmup``: how many leading rows
    are warm-up. Returns {"pass", "warmup_rows", "checks": {name: {"pass", "value", "line"}}}."""
    checks = {}
    after = rows[warmup:]
    if not after:
        line = f"no window after the {warmup} warm-up window(s): run longer"
        checks = {
            name: {"pass": False, "value": None, "line": f"({key}) {name}: {line}"}
            for key, name in zip("abc", ("memory", "answers", "latency"))
        }
        return {"pass": False, "warmup_rows": warmup, "checks": checks}

    base = rows[warmup - 1]["rss_mib"] if warmup else rows[0]["rss_mib"]
    end = rows[-1]["rss_mib"]
    if base is None or end is None or base <= 0:
        checks["memory"] = {"pass": False, "value": None, "line": "(a) memory: no RSS sample (the server was gone)"}
    else:
        growth = end / base - 1
        checks["memory"] = {
            "pass": growth < RSS_GROWTH,
            "value": round(growth, 4),
            "line": f"(a) memory: RSS {base:.0f} MiB after warm-up -> {end:.0f} MiB at the end: {growth:+.1%} (limit < +{RSS_GROWTH:.0%})",
        }

    total = sum(r["unexpected"] for r in rows)
    details = Counter()
    for r in rows:
        details.update(r.get("unexpected_details") or {})
    shown = ", ".join(f"{d} x{n}" for d, n in details.most_common(5))
    checks["answers"] = {
        "pass": total == 0,
        "value": total,
        "line": f"(b) answers: {total} unexpected" + (f" ({shown})" if shown else ""),
    }

    first, last = after[0]["p95_ms"], rows[-1]["p95_ms"]
    if not first or not last:
        checks["latency"] = {
            "pass": False,
            "value": None,
            "line": "(c) latency: no answered request in the first window after warm-up or the last",
        }
    else:
        drift = last / first - 1
        checks["latency"] = {
            "pass": drift <= P95_DRIFT,
            "value": round(drift, 4),
            "line": f"(c) latency: p95 {first:.0f} ms in window {after[0]['window']} (first after warm-up) -> {last:.0f} ms in window "
            f"{rows[-1]['window']} (last): {drift:+.1%} (limit +{P95_DRIFT:.0%})",
        }
    return {"pass": all(c["pass"] for c in checks.values()), "warmup_rows": warmup, "checks": checks}


# --- the run -----------------------------------------------------------------------------------------


def retry_after(header: str | None) -> float:
    """Seconds a 503's Retry-After asks for (1 when absent or not a number), at most MAX_RETRY_AFTER_S."""
    try:
        return min(max(float(header), 0.0), MAX_RETRY_AFTER_S)
    except (TypeError, ValueError):
        return 1.0


def server_sample(proc) -> dict:
    """The server process's RSS (MiB), threads and open file descriptors; None each once it is gone."""
    import psutil

    try:
        with proc.oneshot():
            return {
                "rss_mib": round(proc.memory_info().rss / 2**20, 1),
                "threads": proc.num_threads(),
                "fds": proc.num_fds(),
            }
    except psutil.Error:
        return {"rss_mib": None, "threads": None, "fds": None}


def soak(
    base: str,
    server,
    proc,
    texts: list[str],
    ids: list[str],
    *,
    concurrency: int,
    run_s: float,
    window_s: float,
    max_requests: int,
    seed: int,
    stop: threading.Event,
    threads: list,
    rows: list,
    on_row,
) -> dict:
    """``concurrency`` clients for ``run_s`` seconds (at most ``max_requests`` requests); a row per window is appended
    to ``rows`` (and handed to ``on_row``) as it closes, so an interrupted run keeps what it measured."""
    import httpx

    lock = threading.Lock()
    pending: list[tuple[int | None, float, str, str]] = []
    sent = [0]
    kinds, weights = mix(texts)
    t_start = time.time()
    deadline = t_start + run_s

    def worker(w: int) -> None:
        rng = random.Random(seed * 1000 + w)
        with httpx.Client(timeout=CLIENT_TIMEOUT_S) as client:
            while not stop.is_set() and time.time() < deadline:
                with lock:
                    if sent[0] >= max_requests:
                        return
                    sent[0] += 1
                kind = rng.choices(kinds, weights)[0]
                method, url, kw, expected = request_for(kind, rng, base, texts, ids)
                label = f"bad-{expected}" if kind == "bad" else kind  # which bad request: the 4xx it must get
                wait = 0.0
                t0 = time.perf_counter()
                try:
                    r = client.request(method, url, **kw)
                    status, detail = r.status_code, f"{label}:{r.status_code}"
                    if status == 503:
                        wait = retry_after(r.headers.get("retry-after"))
                except httpx.HTTPError as err:
                    status, detail = None, f"{label}:{type(err).__name__}"
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    pending.append((status, ms, outcome(status, expected), detail))
                if wait:  # a polite client: back after Retry-After (the others keep the bound full meanwhile)
                    stop.wait(min(wait, max(deadline - time.time(), 0.0)))

    threads += [
        threading.Thread(target=worker, args=(w,), name=f"soak-client-{w}", daemon=True) for w in range(concurrency)
    ]
    for t in threads:
        t.start()
    n_windows = max(1, math.ceil(run_s / window_s - 1e-9))
    t_prev, ended = t_start, None
    for i in range(n_windows):
        end = min(t_start + (i + 1) * window_s, deadline)
        while time.time() < end and ended is None:
            if server.poll() is not None:
                ended = f"the server exited with {server.returncode}"
            elif not any(t.is_alive() for t in threads):
                ended = f"--max-requests {max_requests} reached"
            else:
                time.sleep(min(0.5, max(end - time.time(), 0.0)))
        last = i == n_windows - 1 or ended is not None
        if last:  # the clients stop at the deadline; their answers in flight belong to the last row
            stop.set()
            for t in threads:
                t.join(CLIENT_TIMEOUT_S + 5)
        now = time.time()
        sample = server_sample(proc)
        with lock:
            batch = pending[:]
            pending.clear()
        row = make_row(i + 1, now - t_start, now - t_prev, batch, sample)
        rows.append(row)
        on_row(row)
        t_prev = now
        if last:
            break
    return {"requests_sent": sent[0], "seconds": round(time.time() - t_start, 1), "ended_early": ended}


# --- outputs -------------------------------------------------------------------------------------------


def _cell(v, fmt: str = "{}") -> str:
    return "-" if v is None else fmt.format(v)


def table(rows: list[dict], warmup: int) -> list[str]:
    lines = [
        "| window | end (s) | RSS MiB | threads | fds | requests | req/s | 503 share | unexpected | p50 ms | p95 ms | p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, r in enumerate(rows):
        name = f"{r['window']} (warm-up)" if i < warmup else str(r["window"])
        lines.append(
            f"| {name} | {r['t_end_s']:.0f} | {_cell(r['rss_mib'], '{:.0f}')} | {_cell(r['threads'])} | {_cell(r['fds'])} | {r['requests']} "
            f"| {_cell(r['rps'], '{:.1f}')} | {_cell(r['share_503'], '{:.1%}')} | {r['unexpected']} | {_cell(r['p50_ms'])} "
            f"| {_cell(r['p95_ms'])} | {_cell(r['p99_ms'])} |"
        )
    return lines


def verdict_lines(report: dict) -> list[str]:
    v = report["verdict"]
    lines = [("PASS  " if c["pass"] else "FAIL  ") + c["line"] for c in v["checks"].values()]
    lines.append(f"verdict: {'PASS' if v['pass'] else 'FAIL'}")
    return lines


def plot(path: Path, rows: list[dict], warmup: int) -> str | None:
    """RSS, p95 and 503 share against minutes; the reason when no plot is written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    minutes = [r["t_end_s"] / 60 for r in rows]
    fig, axes = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
    series = [("rss_mib", "server RSS (MiB)"), ("p95_ms", "p95 latency (ms)"), ("share_503", "503 share")]
    for ax, (key, label) in zip(axes, series):
        ax.plot(minutes, [r[key] if r[key] is not None else float("nan") for r in rows], marker="o", markersize=3)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        if warmup:
            ax.axvspan(0, minutes[warmup - 1], color="grey", alpha=0.15, label="warm-up")
    axes[0].legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("minutes")
    axes[0].set_title("graphtx serve soak at its admission limit")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def alive_word(run: dict) -> str:
    return "not checked (interrupted)" if run.get("interrupted") else "yes" if run.get("alive") else "NO"


def write_outputs(out: Path, report: dict) -> None:
    rows, warmup = report["rows"], report["verdict"]["warmup_rows"]
    note = plot(out / "soak.png", rows, warmup) if rows else "no rows: no plot"
    report["plot"] = note or "soak.png"
    (out / "soak.json").write_text(json.dumps(report, indent=2) + "\n")
    s, run = report["settings"], report["run"]
    md = [
        "# graphtx serve soak",
        "",
        f"machine: {report['machine']}",
        "",
        f"index {s['index']} ({s['documents']} documents); max_pending {s['max_pending']}, {s['concurrency']} clients, "
        f"{s['minutes']} min in windows of {s['window_s']:g} s, seed {s['seed']}, {s['query_texts']} query texts; "
        f"server up in {run.get('startup_s', '-')} s; {run.get('requests_sent', 0)} requests"
        + (f"; ended early: {run['ended_early']}" if run.get("ended_early") else "")
        + ("; INTERRUPTED" if run.get("interrupted") else ""),
        "",
        *table(rows, warmup),
        "",
        *(f"- {line}" for line in verdict_lines(report)),
        f"- server alive and healthy after the run: {alive_word(run)}; "
        f"exit code {run.get('server_exit_code')}; processes left behind: {run.get('left_behind')}",
    ]
    if note:
        md.append(f"- {note}")
    (out / "soak.md").write_text("\n".join(md) + "\n")


# --- main -------------------------------------------------------------------------------------------------


def _sigterm(signum, frame):
    raise KeyboardInterrupt  # stop like Ctrl-C: the finally blocks stop the server


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="index directory written by `graphtx index`")
    ap.add_argument("--minutes", type=float, default=60.0, help="how long the load runs (default 60)")
    ap.add_argument("--out", required=True, help="directory for soak.json, soak.md, soak.png, serve.yaml, server.log")
    ap.add_argument(
        "--corpus",
        help="corpus directory: its first claims (or abstracts) are the query texts (without: id queries only)",
    )
    ap.add_argument(
        "--max-pending",
        type=int,
        default=8,
        help="serve.max_pending of the server: running + queued requests (default 8)",
    )
    ap.add_argument("--concurrency", type=int, help="client threads (default: max_pending + 8)")
    ap.add_argument("--window-s", type=float, help="seconds per row (default 60; 10 for a run under 3 minutes)")
    ap.add_argument("--max-requests", type=int, default=1_000_000, help="requests in all, at most (default 1,000,000)")
    ap.add_argument("--texts", type=int, default=500, help="query texts taken from the corpus")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--startup-timeout", type=float, default=180.0)
    args = ap.parse_args()
    if args.minutes <= 0 or args.max_pending < 1 or (args.window_s is not None and args.window_s <= 0):
        ap.error("--minutes, --max-pending and --window-s must be positive")

    import httpx
    import psutil

    window_s = window_seconds(args.minutes, args.window_s)
    concurrency = args.concurrency or args.max_pending + 8
    run_s = args.minutes * 60
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()
    machine_line = machine()
    print(f"machine: {machine_line}")
    manifest, ids = index_ids(args.index)
    texts = query_texts(args.corpus, args.texts)
    config = out / "serve.yaml"
    config.write_text(f"serve:\n  max_pending: {args.max_pending}\n")
    settings = {
        "index": args.index,
        "documents": manifest["count"],
        "corpus": args.corpus,
        "query_texts": len(texts),
        "minutes": args.minutes,
        "window_s": window_s,
        "max_pending": args.max_pending,
        "concurrency": concurrency,
        "max_requests": args.max_requests,
        "seed": args.seed,
        "mix": MIX,
        "client_timeout_s": CLIENT_TIMEOUT_S,
        "rss_growth_limit": RSS_GROWTH,
        "p95_drift_limit": P95_DRIFT,
        "server": f"graphtx serve --index {args.index} --port PORT --quiet --config {config}",
    }
    print(
        f"max_pending {args.max_pending}, {concurrency} clients, {args.minutes:g} min in windows of {window_s:g} s, "
        f"{len(texts)} query texts, {manifest['count']} documents\n"
    )

    rows: list[dict] = []
    run: dict = {"interrupted": False}
    stop = threading.Event()
    threads: list[threading.Thread] = []
    previous = signal.signal(signal.SIGTERM, _sigterm)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = out / "server.log"
    header = table([], 0)
    try:
        with open(log_path, "wb") as log:
            server = start_server(args.index, port, "--config", str(config), stderr=log)
            kids: list = []
            try:
                try:
                    run["startup_s"] = round(wait_healthy(server, base, args.startup_timeout), 1)
                except SystemExit as err:
                    raise SystemExit(f"{err}\n{log_path.read_text(errors='replace')[-3000:]}") from None
                proc = psutil.Process(server.pid)
                # first-use costs (spaCy, BM25) before the clock starts; the verdict's warm-up window absorbs the rest
                warm = {"text": texts[0], "hybrid": True} if texts else {"id": ids[0]}
                httpx.post(f"{base}/search", json=warm, timeout=120)
                run["rss_mib_ready"] = server_sample(proc)["rss_mib"]
                print("\n".join(header))
                on_row = lambda row: print(table([row], 0)[-1], flush=True)  # noqa: E731
                run.update(
                    soak(
                        base,
                        server,
                        proc,
                        texts,
                        ids,
                        concurrency=concurrency,
                        run_s=run_s,
                        window_s=window_s,
                        max_requests=args.max_requests,
                        seed=args.seed,
                        stop=stop,
                        threads=threads,
                        rows=rows,
                        on_row=on_row,
                    )
                )
                try:
                    run["alive"] = server.poll() is None and httpx.get(f"{base}/healthz", timeout=10).status_code == 200
                except httpx.HTTPError:
                    run["alive"] = False
            except KeyboardInterrupt:
                run["interrupted"] = True
                print("\ninterrupted: stopping the server", file=sys.stderr)
            finally:
                stop.set()
                try:
                    kids = psutil.Process(server.pid).children(recursive=True)
                except psutil.Error:
                    pass
                stop_server(server)
                run["server_exit_code"] = server.returncode
                left = [k for k in kids if k.is_running()]
                for k in left:
                    k.kill()
                run["left_behind"] = len(left)
                for t in threads:
                    t.join(5)
    finally:
        signal.signal(signal.SIGTERM, previous)

    load_end = os.getloadavg()
    warmup = warmup_rows(len(rows), window_s, run_s)
    report = {
        "machine": f"{machine_line}; at the end {load_end[0]:.2f}",
        "load_average": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in load_end]},
        "settings": settings,
        "run": run,
        "rows": rows,
        "verdict": verdict(rows, warmup),
    }
    write_outputs(out, report)
    print()
    print("\n".join(verdict_lines(report)))
    print(f"server alive and healthy after the run: {alive_word(run)}; processes left behind: {run['left_behind']}")
    print(
        f"load average (1 min): {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end; wrote {out}/soak.json, soak.md, {report['plot']}"
    )
    if run["interrupted"]:
        return 130
    return 0 if report["verdict"]["pass"] and run.get("alive") and not run["left_behind"] else 1


if __name__ == "__main__":
    sys.exit(main())
