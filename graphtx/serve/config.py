"""ServeConfig: ``graphtx serve``, the HTTP service over one index directory (the ``serve:`` section)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServeConfig:
    """``graphtx serve``: the HTTP service over one index directory."""

    host: str = "127.0.0.1"  # loopback by default: exposing the service is a deliberate choice
    port: int = 8000  # TCP port to listen on
    max_k: int = 100  # largest k a request may ask for
    max_request_bytes: int = 65_536  # larger request bodies are refused with 413 before they are parsed
    max_text_chars: int = 20_000  # longer query texts are refused with 413 (parsing time grows with length)
    max_explain_hits: int = 10  # hits explained per /explain request
    max_offset: int = 1000  # /search offset (the web page's pages): deeper pages rank more candidates per request
    read_only: bool = True  # False adds DELETE /documents/{id} (removes a document from the index)
    workers: int = 4  # threads running queries; /healthz is answered beside them, never queued behind them
    max_pending: int = 64  # requests admitted at once (running + waiting for a worker); more get 503 + Retry-After
    read_timeout_s: float = (
        30.0  # a request's head, then its body, must each arrive within this (slow clients: 408, closed)
    )
    idle_timeout_s: float = 5.0  # a connection without a request in progress is closed after this
    allowed_hosts: tuple[
        str, ...
    ] = ()  # Host header names accepted besides localhost/127.0.0.1/[::1] ("*.example.org", "*" = any)
    max_batch_topics: int = 20  # topics per POST /search/batch: they run one after another on one worker thread

    def __post_init__(self) -> None:
        if self.max_batch_topics < 1:
            raise ValueError("serve.max_batch_topics must be >= 1")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"serve.port must be in 0..65535, got {self.port}")
        if (
            min(
                self.max_k,
                self.max_request_bytes,
                self.max_text_chars,
                self.max_explain_hits,
                self.workers,
                self.max_pending,
            )
            < 1
        ):
            raise ValueError(
                "serve.max_k, max_request_bytes, max_text_chars, max_explain_hits, workers and max_pending must be >= 1"
            )
        if self.max_offset < 0:
            raise ValueError("serve.max_offset must be >= 0")
        if not (self.read_timeout_s > 0 and self.idle_timeout_s > 0):
            raise ValueError("serve.read_timeout_s and serve.idle_timeout_s must be > 0")
        if isinstance(self.allowed_hosts, str):
            object.__setattr__(self, "allowed_hosts", (self.allowed_hosts,))
        if not is_loopback(self.host) and not self.allowed_hosts:
            raise ValueError(
                f"serving on {self.host!r} (beyond loopback) needs the host names clients will use: "
                "give --allow-host NAME (or serve.allowed_hosts in the config; '*' accepts any)"
            )


def is_loopback(host: str) -> bool:
    """True for 'localhost' and loopback addresses (127.0.0.0/8, ::1)."""
    import ipaddress

    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
