"""ASGI guards in front of the service: Host allow-list, admission bound, body size and read deadline.

Pure ASGI (no per-request thread, no body buffering of their own), outermost first::

    HostAllowList   400 unless the Host header names this service (localhost, 127.0.0.1, [::1], serve.allowed_hosts)
    BodyGuard       413 for a body over serve.max_request_bytes (by Content-Length or as it streams in),
                    408 when the body has not arrived within serve.read_timeout_s
    Admission       503 + Retry-After when serve.max_pending requests are already running or queued

``/healthz`` passes the admission bound (it never waits for a worker). Every refusal is JSON,
``{"error": message}``, and closes the connection. A request head that arrives too slowly is cut
earlier, in the HTTP protocol (``server.py``), before any of this runs.
"""

from __future__ import annotations

import asyncio
import json
import time

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")
HEALTH_PATH = "/healthz"


async def refuse(send, status: int, message: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    """Answer ``{"error": message}`` with ``status`` and close the connection."""
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# --- Host allow-list ------------------------------------------------------------------


def host_name(header: str) -> str:
    """The name part of a Host header, lower case: 'Example.org:8000' -> 'example.org', '[::1]:80' -> '[::1]'."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def host_allowed(name: str, allowed: tuple[str, ...]) -> bool:
    for pattern in (*LOOPBACK_NAMES, *allowed):
        pattern = pattern.lower()
        if pattern == "*" or name == pattern or (pattern.startswith("*.") and name.endswith(pattern[1:])):
            return True
    return False


class HostAllowList:
    """400 for a Host header this service does not answer to (DNS rebinding, stray proxies)."""

    def __init__(self, app, allowed: tuple[str, ...]):
        self.app, self.allowed = app, tuple(allowed)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host_name(header)
            if not header or not host_allowed(name, self.allowed):
                shown = name[:80] or "(none)"
                return await refuse(
                    send,
                    400,
                    f"Host {shown!r} is not served here: add it to serve.allowed_hosts (graphtx serve --allow-host NAME)",
                )
        await self.app(scope, receive, send)


# --- admission ---------------------------------------------------------------------------


class Admission:
    """At most ``limit`` requests in the app at once (waiting for a worker or running); /healthz always passes.

    A request is admitted once its body is in (a slow upload waits under the read deadline, not in
    a worker's queue, and cannot crowd out complete requests); one without a body at once. The
    count lives on the event loop's thread, so no lock is needed.
    """

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit
        self.active = 0

    def _busy(self) -> str:
        return f"busy: {self.limit} requests in progress (serve.max_pending); retry shortly"

    async def __call__(self, scope, receive, send):
        from starlette.exceptions import HTTPException

        if scope["type"] != "http" or scope["path"] == HEALTH_PATH:
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        admitted = False

        def admit() -> bool:
            nonlocal admitted
            if not admitted and self.active < self.limit:
                self.active += 1
                admitted = True
            return admitted

        if headers.get(b"content-length", b"0") == b"0" and b"transfer-encoding" not in headers:  # no body to wait for
            if not admit():
                return await refuse(send, 503, self._busy(), ((b"retry-after", b"1"),))
            receive_admitted = receive
        else:

            async def receive_admitted():
                message = await receive()
                if message["type"] == "http.request" and not message.get("more_body", False) and not admit():
                    raise HTTPException(503, self._busy(), {"retry-after": "1", "connection": "close"})
                return message

        try:
            await self.app(scope, receive_admitted, send)
        finally:
            if admitted:
                self.active -= 1


# --- body size and read deadline -------------------------------------------------------------


DRAIN_BYTES = (
    1 << 20
)  # an announced oversized body up to this size is read and dropped before the 413 (lingering close)


class BodyGuard:
    """413 for a body over ``limit`` bytes; 408 when the body is not in within ``timeout`` seconds.

    An announced body over the limit but under DRAIN_BYTES is read and dropped (within ``timeout``) before the 413 is
    sent: closing a connection whose request is still arriving makes the peer's TCP stack reset it, and a client still
    writing its body then sees a reset instead of the 413 (benchmarks/soak_serve.py found about one in three). Larger
    ones are refused at once: reading them would cost more than the client's confusion."""

    def __init__(self, app, limit: int, timeout: float):
        self.app, self.limit, self.timeout = app, limit, timeout

    async def _drain(self, receive, length: int) -> None:
        """Read and drop up to ``length`` announced body bytes, within the read deadline; give up quietly otherwise."""
        deadline, read = time.monotonic() + self.timeout, 0
        while read < length:
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.0))
            except asyncio.TimeoutError:
                return
            if message["type"] != "http.request":
                return
            read += len(message.get("body", b""))
            if not message.get("more_body", False):
                return

    async def __call__(self, scope, receive, send):
        from starlette.exceptions import HTTPException

        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            if length.isdigit() and int(length) <= DRAIN_BYTES:
                await self._drain(receive, int(length))
            return await refuse(send, 413, f"request body over {self.limit} bytes (serve.max_request_bytes)")
        deadline = time.monotonic() + self.timeout
        received = 0
        done = False

        async def guarded_receive():
            nonlocal received, done
            if done:  # the body is in: later receives wait for a disconnect, which has no deadline
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.0))
            except asyncio.TimeoutError:  # raised inside body reading: the app's error handler answers
                raise HTTPException(
                    408,
                    f"request body not received within {self.timeout:g} s (serve.read_timeout_s)",
                    {"connection": "close"},
                ) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise HTTPException(
                        413, f"request body over {self.limit} bytes (serve.max_request_bytes)", {"connection": "close"}
                    )
                done = not message.get("more_body", False)
            return message

        await self.app(scope, guarded_receive, send)
