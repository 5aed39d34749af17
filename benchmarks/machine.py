"""What every benchmark prints first: the machine it ran on (imported by the bench_*.py scripts)."""

from __future__ import annotations

import os
import platform


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what the platform module knows."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def basics() -> str:
    """CPU, cores and Python: the start of every benchmark's machine line."""
    return f"{cpu_model()}; {os.cpu_count()} cores; Python {platform.python_version()}"
