"""`graphtx serve` in a subprocess under hostile load (loopback, bounded loops): it stays up, answers /healthz, RSS bounded."""

from __future__ import annotations

import asyncio
import random
import signal
import string
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
psutil = pytest.importorskip("psutil")

from tests.serve.live import request, serve_process  # noqa: E402

CONFIG = """\
serve:
  workers: 2
  max_pending: 32
  max_request_bytes: 4096
  read_timeout_s: 2
  idle_timeout_s: 2
"""


async def _client(port: int, kind: str, i: int) -> str:
    """One hostile or ordinary connection; returns what became of it ('200', '413', '408', 'closed', ...)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as err:
        return f"connect-{type(err).__name__}"
    try:
        if kind == "normal":
            writer.write(
                f"GET /documents/T-{i % 120:05d}?graph=false HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
            )
        elif kind == "oversized":
            writer.write(
                b"POST /search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n"
            )
        elif kind == "slow_body":
            writer.write(
                b"POST /search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
            )
        elif kind == "slow_head":
            writer.write(b"POST /search HTTP/1.1\r\nHost: loc")
        # "idle": sends nothing
        await writer.drain()
        dribble = (
            asyncio.create_task(_dribble(writer, b" " if kind == "slow_body" else b"a"))
            if kind.startswith("slow")
            else None
        )
        try:
            line = await asyncio.wait_for(reader.readline(), 25)
        finally:
            if dribble is not None:
                dribble.cancel()
        return line.split()[1].decode() if line.startswith(b"HTTP/1.1") else "closed"
    except (OSError, asyncio.TimeoutError) as err:
        return type(err).__name__
    finally:
        writer.close()


async def _dribble(writer, byte: bytes) -> None:
    """A byte every 0.2 s for at most 20 s (each well inside any per-read clock), until the server cuts it off."""
    for _ in range(100):
        await asyncio.sleep(0.2)
        if writer.is_closing():
            return
        writer.write(byte)
        try:
            await writer.drain()
        except OSError:
            return


async def _storm(port: int, per_kind: int) -> dict[str, list[str]]:
    kinds = ["normal", "oversized", "slow_body", "slow_head", "idle"]
    jobs = [(kind, i) for i in range(per_kind) for kind in kinds]
    results = await asyncio.wait_for(asyncio.gather(*(_client(port, k, i) for k, i in jobs)), 60)
    out: dict[str, list[str]] = {k: [] for k in kinds}
    for (kind, _), r in zip(jobs, results):
        out[kind].append(r)
    return out


@pytest.mark.timeout(240)
def test_service_survives_hostile_clients_and_stays_bounded(tiny_index, tmp_path):
    config = tmp_path / "serve.yaml"
    config.write_text(CONFIG)
    with serve_process(["--index", str(tiny_index), "--config", str(config), "--quiet"]) as (proc, port):
        server = psutil.Process(proc.pid)
        # warm up: spaCy, BM25, the model's first shapes
        for q in ("1. A pump comprising a nozzle.", "1. A zorblat3 device comprising a frame and a chute."):
            assert request(port, "POST", "/search", {"text": q, "k": 5, "hybrid": True})[0] == 200

        # 250 connections at once (50 each: ordinary, oversized, slow body, slow head, silent), /healthz polled beside them
        health: list[tuple[int, float]] = []
        stop = threading.Event()

        def poll() -> None:
            while not stop.is_set():
                t0 = time.monotonic()
                try:
                    status = request(port, "GET", "/healthz", timeout=10)[0]
                except OSError:
                    status = -1
                health.append((status, time.monotonic() - t0))
                time.sleep(0.25)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        try:
            outcome = asyncio.run(_storm(port, per_kind=50))
        finally:
            stop.set()
            poller.join(15)
        assert proc.poll() is None, "the service died"
        assert set(outcome["oversized"]) <= {"413"} and outcome["oversized"].count("413") >= 45, outcome["oversized"]
        assert set(outcome["normal"]) <= {"200", "503"} and outcome["normal"].count("200") >= 25, outcome["normal"]
        assert set(outcome["slow_body"]) <= {"408", "503", "closed"}, outcome["slow_body"]  # cut by the read time-out
        assert set(outcome["slow_head"]) <= {"408", "closed"}, outcome["slow_head"]
        assert set(outcome["idle"]) == {"closed"}, outcome["idle"]  # closed by the idle time-out
        assert health and all(status == 200 for status, _ in health), health
        assert max(seconds for _, seconds in health) < 5, health
        connections = server.net_connections() if hasattr(server, "net_connections") else server.connections()
        assert len(connections) <= 3  # every hostile connection is gone

        # distinct-word queries: memory must not grow with the words seen
        rng = random.Random(0)

        def word() -> str:
            return "".join(rng.choice(string.ascii_lowercase) for _ in range(10))

        texts = [
            f"1. A {word()} device comprising a {word()} housing mounted on a {word()} frame." for _ in range(1000)
        ]
        rss_before = server.memory_info().rss
        with ThreadPoolExecutor(4) as pool:
            statuses = list(
                pool.map(
                    lambda t: request(port, "POST", "/search", {"text": t, "k": 5, "hybrid": True}, timeout=60)[0],
                    texts,
                )
            )
        assert statuses.count(200) >= 990 and set(statuses) <= {200, 400, 503}
        growth = (server.memory_info().rss - rss_before) / 2**20
        worst = max(seconds for _, seconds in health)
        print(
            f"storm: { {k: sorted(set(v)) for k, v in outcome.items()} }; healthz {len(health)} polls, slowest {worst:.2f} s; RSS +{growth:.1f} MiB over 1,000 queries"
        )
        assert growth < 48, f"RSS grew {growth:.1f} MiB over 1,000 distinct-word queries"
        assert request(port, "GET", "/healthz")[0] == 200
        proc.send_signal(signal.SIGTERM)  # a service's normal end: graceful, exit 0
        assert proc.wait(30) == 0
