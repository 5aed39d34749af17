"""`graphtx serve` exit codes and messages: a port in use, an unusable host, a host beyond loopback without names."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("uvicorn")

from graphtx.cli import main  # noqa: E402


@pytest.mark.timeout(60)
def test_a_busy_port_is_a_usage_error_with_a_clear_message(tiny_index, capsys):
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        assert main(["serve", "--index", str(tiny_index), "--port", str(port), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert (
            f"port {port} on 127.0.0.1 is already in use" in err
            and "choose another --port" in err
            and "Traceback" not in err
        )
    finally:
        holder.close()


@pytest.mark.timeout(60)
def test_bad_hosts_are_usage_errors(tiny_index, capsys):
    assert main(["serve", "--index", str(tiny_index), "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "beyond loopback" in err and "--allow-host" in err
    assert (
        main(
            ["serve", "--index", str(tiny_index), "--host", "no-such-host.invalid", "--allow-host", "x", "--port", "0"]
        )
        == 2
    )
    assert "cannot listen on 'no-such-host.invalid'" in capsys.readouterr().err
    assert (
        main(["serve", "--index", str(tiny_index), "--host", "192.0.2.1", "--allow-host", "x", "--port", "0"]) == 2
    )  # not this machine's address
    assert "cannot listen on 192.0.2.1" in capsys.readouterr().err
