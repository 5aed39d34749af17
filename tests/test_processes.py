"""tests.processes.default_signals: a child a test signals starts with SIGINT and SIGTERM at their defaults,
even where the test run itself was started with SIGINT ignored (``nohup make test &``) or blocked."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys

import pytest

from tests.processes import default_signals

REPORT = """
import signal
blocked = signal.pthread_sigmask(signal.SIG_BLOCK, []) & {signal.SIGINT, signal.SIGTERM}
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, len(blocked))
"""
WAIT = "import time; print('ready', flush=True); time.sleep(60)"


@contextlib.contextmanager
def launched_in_the_background():
    """This process as ``nohup make test &`` leaves it (SIGINT ignored), with SIGINT and SIGTERM blocked as well; restored after."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, previous)


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signals")
def test_a_child_inherits_an_ignored_sigint_without_the_helper_and_gets_the_defaults_with_it():
    with launched_in_the_background():
        inherited = subprocess.run(
            [sys.executable, "-c", REPORT], capture_output=True, text=True, timeout=30, check=True
        )
        restored = subprocess.run(
            [sys.executable, "-c", REPORT],
            preexec_fn=default_signals,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    assert inherited.stdout.split() == ["False", "True", "2"]  # the failure the helper prevents
    assert restored.stdout.split() == ["True", "True", "0"]


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_child_started_with_the_helper_ends_on_a_signal_although_the_test_run_ignores_sigint(sig):
    with launched_in_the_background():
        proc = subprocess.Popen(
            [sys.executable, "-c", WAIT],
            preexec_fn=default_signals,
            start_new_session=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(sig)
        assert (
            proc.wait(timeout=20) == -sig
        )  # KeyboardInterrupt unhandled: Python ends by SIGINT itself; SIGTERM: default action
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()
