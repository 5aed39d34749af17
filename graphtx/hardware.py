"""What this machine's CPU can do, read without loading torch (the build's plan asks before any stage runs).

bf16 in hardware: oneDNN multiplies bf16 matrices several times as fast as fp32 on a CPU with AVX512-BF16 or AMX
(on 2 cores of an AVX512-BF16 machine a (5,324 x 256) by (256 x 2,048) product took 7-10 ms against 38-40 ms:
benchmarks/studies/cpu_kernels.py); without them bf16 is emulated and no faster. ``trains_in_bf16`` is the one rule
of where a model trains under bf16 autocast: graphtx/train/distributed.py applies it, graphtx/build/run.py projects
the model step's time with it.
``teacher_in_bf16`` is the one rule of where a peer encodes a teacher's vectors under bf16 autocast
(graphtx/train/run_teacher.py ``teacher_precision`` applies it; graphtx/text/teacher.py encodes as told).
"""

from __future__ import annotations

import functools

BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")  # /proc/cpuinfo flags of bf16 dot products in hardware


@functools.cache
def cpu_has_native_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU multiplies bf16 in hardware (a flag of BF16_CPU_FLAGS); False where it cannot tell."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return any(flag in flags for flag in BF16_CPU_FLAGS)


def trains_in_bf16(device_type: str, enabled: bool, on_cpu: bool = False) -> bool:
    """Whether a model's forward trains under bf16 autocast when ``enabled`` (``train.amp``): on a CUDA device, and
    with ``on_cpu`` on a CPU with bf16 in hardware. ``on_cpu`` is the label-free distillation's (stage pretrain): on 2
    such cores bf16 made its step 1.5x as fast and the models it trained searched as well as fp32's
    (benchmarks/results/cpu-bf16.md); the citation stage stays fp32 on a CPU, not measured there."""
    if not enabled:
        return False
    return device_type == "cuda" or (on_cpu and device_type == "cpu" and cpu_has_native_bf16())


TEACHER_BF16 = "bf16-autocast"  # a teacher's vectors encoded under bf16 autocast: the peer vector cache's dtype name


def teacher_in_bf16(device_type: str, enabled: bool) -> bool:
    """Whether a peer encodes a teacher's vectors under bf16 autocast when ``enabled`` (``train.amp``): on a CPU with bf16
    in hardware. There autocast casts the matrix products to bf16 (the weights stay float32), and the vectors are
    normalised again in fp32: all-mpnet-base-v2 over 2,000 software abstracts gave cosines of at least 0.9998 to fp32's
    in 0.47 of the time, and the builds distilled from them searched as well (benchmarks/results/cpu-bf16.md). On a GPU
    the teacher keeps fp32 (not measured there; it is fast already)."""
    return enabled and device_type == "cpu" and cpu_has_native_bf16()
