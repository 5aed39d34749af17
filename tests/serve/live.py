"""A real server for the service tests: uvicorn in a thread (or `graphtx serve` in a subprocess), always stopped.

Raw-socket helpers speak HTTP/1.1 by hand, so tests can send what no well-behaved client would:
a head or body a byte at a time, a body larger than announced, nothing at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from graphtx.config import ServeConfig
from graphtx.serve.server import bind, make_server
from tests.processes import default_signals

REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def live_server(app, cfg: ServeConfig) -> Iterator[int]:
    """Serve ``app`` on a free loopback port in a thread; yields the port; stops the server on the way out."""
    sock = bind("127.0.0.1", 0)
    server = make_server(app, cfg, log_level="warning")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="live-server", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(15)
        if thread.is_alive():
            server.force_exit = True
            thread.join(10)
        sock.close()
        assert not thread.is_alive(), "the server thread did not stop"


@contextlib.contextmanager
def serve_process(args: list[str], timeout: float = 90) -> Iterator[tuple[subprocess.Popen, int]]:
    """``graphtx serve ARGS --port 0`` in a subprocess; yields (process, port) once it listens; killed on the way out."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphtx", "serve", *args, "--port", "0"],
        cwd=REPO,
        env=env,
        preexec_fn=default_signals,  # the SIGINT / SIGTERM that stop it work even where the test run ignores SIGINT
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port, seen, deadline = None, [], time.monotonic() + timeout
        while port is None:
            line = proc.stderr.readline()
            if not line:
                raise AssertionError(f"graphtx serve exited {proc.wait(5)} before listening: {''.join(seen)[-2000:]}")
            seen.append(line)
            found = re.search(r" on http://127\.0\.0\.1:(\d+) ", line)
            port = int(found.group(1)) if found else None
            assert time.monotonic() < deadline, f"graphtx serve did not listen within {timeout} s"
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # keep the pipe drained
        wait_healthy(port, timeout=max(deadline - time.monotonic(), 5))
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def wait_healthy(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if request(port, "GET", "/healthz", timeout=5)[0] == 200:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, "the service never answered /healthz"
        time.sleep(0.2)


# --- raw HTTP/1.1 -------------------------------------------------------------------------


def connect(port: int, timeout: float = 10) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.settimeout(timeout)
    return sock


def read_response(sock: socket.socket) -> tuple[int, dict, bytes]:
    """(status, headers, body) of one response; status 0 when the server closed without answering."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return 0, {}, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers.get("content-length", 0))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, body


def request(
    port: int, method: str, path: str, body: dict | None = None, host: str = "localhost", timeout: float = 30
) -> tuple[int, dict]:
    """One request on a fresh connection: (status, JSON body)."""
    payload = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    with connect(port, timeout) as sock:
        sock.sendall(head.encode() + payload)
        status, _, data = read_response(sock)
    return status, json.loads(data) if data else {}


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server has closed the connection (reads give EOF or a reset)."""
    try:
        while True:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
