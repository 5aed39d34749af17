"""bf16 autocast: on a GPU for both stages; on a CPU with bf16 in hardware for the label-free distillation only."""

from __future__ import annotations

import json

import pytest
import torch

import graphtx.hardware as hardware
from graphtx.cli import main
from graphtx.hardware import cpu_has_native_bf16, trains_in_bf16
from graphtx.model.encoder import GraphEncoder
from graphtx.train.distributed import bf16_autocast
from tests.train.test_loop import _train_args

FLAGS = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov fma avx avx2 avx512f avx512bw"


@pytest.mark.parametrize(
    "extra, expected", [(" avx512_bf16 avx512_vnni", True), (" amx_bf16 amx_tile", True), (" avx512_vnni", False)]
)
def test_native_bf16_is_read_from_the_cpu_flags(tmp_path, extra, expected):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: a CPU\nflags\t\t: {FLAGS}{extra}\n\nprocessor\t: 1\n")
    assert cpu_has_native_bf16(str(cpuinfo)) is expected


def test_a_machine_without_cpuinfo_is_taken_to_have_no_native_bf16(tmp_path):
    assert cpu_has_native_bf16(str(tmp_path / "missing")) is False


@pytest.mark.parametrize("native", [True, False])
def test_who_trains_in_bf16(monkeypatch, native):
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: native)
    assert trains_in_bf16("cuda", True) and trains_in_bf16("cuda", True, on_cpu=True)
    assert not trains_in_bf16("cuda", False) and not trains_in_bf16("cpu", False, on_cpu=True)  # train.amp off
    assert not trains_in_bf16("cpu", True)  # the citation stage: fp32 on any CPU
    assert trains_in_bf16("cpu", True, on_cpu=True) is native  # the distillation: bf16 where the CPU has it
    with bf16_autocast(torch.device("cpu"), True, on_cpu=True):
        assert torch.is_autocast_enabled("cpu") is native
        if native:
            assert torch.get_autocast_dtype("cpu") == torch.bfloat16
    assert not torch.is_autocast_enabled("cpu")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("native, amp", [(True, True), (True, False), (False, True)])
def test_the_distillation_runs_and_records_its_precision_and_the_citation_stage_stays_fp32(
    synthetic, tmp_path, monkeypatch, native, amp
):
    """Both stages on the CPU: the encoder's forward is under bf16 autocast in stage pretrain exactly when the CPU has
    bf16 and train.amp is on, never in stage base; pretrain's done.json says which precision it trained in."""
    monkeypatch.setattr(hardware, "cpu_has_native_bf16", lambda: native)
    seen: list[bool] = []
    forward = GraphEncoder.forward

    def recording(self, *args, **kwargs):
        if self.training:
            seen.append(torch.is_autocast_enabled("cpu"))
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(GraphEncoder, "forward", recording)
    config = tmp_path / "amp.yaml"
    config.write_text(f"extends: {synthetic / 'tiny.yaml'}\ntrain:\n  amp: {str(amp).lower()}\n")
    args = _train_args(synthetic, tmp_path / "run", "--stages", "pretrain,base", "--max-epochs", "1", "--no-rank-fit")
    args[args.index("--config") + 1] = str(config)
    assert main([*args, "--device", "cpu"]) == 0
    done = json.loads((tmp_path / "run" / "pretrain" / "done.json").read_text())
    bf16 = native and amp
    assert done["precision"] == ("bf16" if bf16 else "fp32")
    steps = done["state"]["step"]
    assert len(seen) > steps > 0
    assert seen[:steps] == [bf16] * steps  # the distillation's steps come first
    assert not any(seen[steps:])  # stage base: fp32
