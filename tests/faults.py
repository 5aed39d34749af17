"""Fault-injection helpers: signal a running `graphtx` command, snapshot a directory, mount a small tmpfs.

``signal_during`` runs a command in its own process group and signals it once it works: Ctrl-C in
a terminal sends SIGINT to the whole foreground process group (``group=True``); a service
manager's SIGTERM or a kill -9 reaches the parent alone. The command starts with SIGINT and SIGTERM
at their defaults whatever launched the test run (``tests.processes.default_signals``). Whatever
happens, every process started here is killed on the way out. ``small_tmpfs`` gives a real full
disk where the test may mount one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from tests.processes import default_signals

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Outcome:
    returncode: int | None  # None: still running after ``exit_within`` s (hung)
    seconds: float  # from the signal to the exit
    left: list[int]  # processes of the run still alive ``children_within`` s after the parent ended
    stderr: str
    was_working: bool  # workers existed and the output was not finished when the signal went


def signal_during(
    args: list[str],
    sig: int,
    ready: Path,
    group: bool = True,
    settle: float = 1.0,
    exit_within: float = 20.0,
    children_within: float = 5.0,
    start_within: float = 60.0,
) -> Outcome:
    """Start ``python -m graphtx *args``; once it has 2 worker processes and ``ready`` exists, wait
    ``settle`` s and send ``sig`` (to the group when ``group``)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphtx", *args],
        env=env,
        start_new_session=True,
        preexec_fn=default_signals,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    parent = psutil.Process(proc.pid)
    seen: dict[int, psutil.Process] = {}
    try:
        deadline = time.monotonic() + start_within
        while time.monotonic() < deadline and proc.poll() is None:
            kids = parent.children(recursive=True)
            seen.update({k.pid: k for k in kids})
            if len([k for k in kids if "resource_tracker" not in _cmdline(k)]) >= 2 and ready.exists():
                break
            time.sleep(0.05)
        time.sleep(settle)
        was_working = proc.poll() is None
        seen.update({k.pid: k for k in _children(parent)})
        if group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        sent = time.monotonic()
        try:
            proc.wait(timeout=exit_within)
            returncode = proc.returncode
        except subprocess.TimeoutExpired:
            returncode = None
        seconds = time.monotonic() - sent
        left = list(seen)
        end = time.monotonic() + children_within
        while left and time.monotonic() < end:
            left = [pid for pid, p in seen.items() if _alive(p)]
            time.sleep(0.1)
        stderr = proc.stderr.read() if returncode is not None else ""
        return Outcome(returncode, seconds, left, stderr, was_working)
    finally:
        for p in [*seen.values(), parent]:
            try:
                p.kill()
            except psutil.Error:
                pass
        proc.kill()
        proc.wait(timeout=10)
        proc.stderr.close()


def _children(parent: psutil.Process) -> list[psutil.Process]:
    try:
        return parent.children(recursive=True)
    except psutil.Error:
        return []


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file below ``directory`` by relative path, with its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


KILL = signal.SIGKILL


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str = "512k"):
    """A tmpfs of ``size`` mounted at ``path`` (skips the test where mounting is not allowed); unmounted after."""
    path.mkdir(parents=True, exist_ok=True)
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root on Linux")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, timeout=20
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=20)
