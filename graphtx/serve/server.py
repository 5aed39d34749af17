"""Running the service: the listening socket, uvicorn with read and idle clocks, a clean stop.

uvicorn's HTTP/1.1 protocol closes a connection that stays idle after a response, but not one
that connects and sends nothing, nor one that sends its request head a byte at a time (each byte
restarts its clock). ``TimedH11Protocol`` adds both:

    idle     from the moment a connection opens (and after each response): ``serve.idle_timeout_s``
    head     from the first byte of a request to its last header: ``serve.read_timeout_s``, then 408

The body has the same read deadline, enforced in ``limits.BodyGuard``. The socket is bound here,
before uvicorn starts, so a port in use is a clear error (exit 2) rather than a log line.

Example::

    sock = bind("127.0.0.1", 0)                       # port 0: any free port
    server = make_server(create_app(index, cfg), cfg)
    server.run(sockets=[sock])
"""

from __future__ import annotations

import errno
import json
import logging
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol

from graphtx.serve.config import ServeConfig

log = logging.getLogger(__name__)


class AddressUnavailable(ValueError):
    """The host/port cannot be listened on (in use, not permitted, not an address of this machine)."""


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with an idle clock from connect and a deadline on each request head."""

    read_timeout: float = 30.0  # set per server by ``make_server``

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._head_timer = None
        # idle from the first moment: a connection that never sends a byte is closed too
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def data_received(self, data: bytes) -> None:
        waiting = self.cycle is None or self.cycle.response_complete  # these bytes belong to a new request's head
        if waiting and self._head_timer is None:
            self._head_timer = self.loop.call_later(self.read_timeout, self._head_timed_out)
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # the head is complete: from here the body's deadline applies (BodyGuard)
            self._cancel_head_timer()

    def connection_lost(self, exc) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        body = json.dumps(
            {"error": f"request head not received within {self.read_timeout:g} s (serve.read_timeout_s)"}
        ).encode()
        head = f"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
        self.transport.write(head.encode() + body)  # h11 cannot answer a request it has not parsed: written as is
        self.transport.close()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on (host, port); a clear ``AddressUnavailable`` when that is not possible."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as err:
        raise AddressUnavailable(
            f"cannot listen on {host!r}: {err.strerror}; give --host an address of this machine (default 127.0.0.1)"
        ) from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(
            socket.SOL_SOCKET, socket.SO_REUSEADDR, 1
        )  # a restart need not wait for TIME_WAIT; a live listener still conflicts
        sock.bind(address)
        sock.listen(2048)
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise AddressUnavailable(
                f"port {port} on {host} is already in use (another graphtx serve?): choose another --port, or stop the process holding it"
            ) from None
        if err.errno in (errno.EACCES, errno.EPERM):
            raise AddressUnavailable(
                f"not permitted to listen on {host}:{port} (ports below 1024 need privileges): choose another --port"
            ) from None
        raise AddressUnavailable(f"cannot listen on {host}:{port}: {err.strerror}; check --host and --port") from None
    sock.setblocking(False)
    return sock


def make_server(app, cfg: ServeConfig, log_level: str = "info"):
    """A uvicorn ``Server`` for ``app`` with the service's clocks; run it with ``server.run(sockets=[bind(...)])``."""
    import uvicorn

    protocol = type("TimedH11Protocol", (TimedH11Protocol,), {"read_timeout": float(cfg.read_timeout_s)})
    config = uvicorn.Config(
        app,
        http=protocol,
        lifespan="on",
        log_level=log_level,
        timeout_keep_alive=cfg.idle_timeout_s,  # type: ignore[arg-type]  (a float works: it goes to loop.call_later)
        timeout_graceful_shutdown=5,
        h11_max_incomplete_event_size=16 * 1024,  # request line + headers; the body has its own limit
    )
    return uvicorn.Server(config)


def bound_address(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"
