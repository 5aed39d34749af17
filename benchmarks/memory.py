"""Memory of a process as the benchmarks report it (imported by the bench_*.py scripts; Linux /proc)."""

from __future__ import annotations

import resource


def rss_mib(pid: int | str = "self") -> float:
    """Current resident set size (MiB) of process ``pid`` (default: this one)."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def peak_mib() -> float:
    """Peak resident set size (MiB) of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
