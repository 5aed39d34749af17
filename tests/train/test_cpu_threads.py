"""Training on a GPU caps torch's CPU threads (the feeding work is small tensors); the CPU and OMP_NUM_THREADS are left alone."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import torch

from graphtx.cli import main
from graphtx.threads import torch_threads
from graphtx.train.distributed import CPU_THREADS_BESIDE_GPU, cpu_threads_beside_gpu
from tests.train.test_loop import _train_args


@pytest.fixture
def eight_threads():
    with torch_threads(8):
        yield


def test_a_cuda_device_caps_the_cpu_threads_and_restores_them(eight_threads, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with cpu_threads_beside_gpu(torch.device("cuda")):  # a device object: no GPU needed to build it
        assert torch.get_num_threads() == CPU_THREADS_BESIDE_GPU
    assert torch.get_num_threads() == 8


def test_an_empty_omp_num_threads_counts_as_unset(eight_threads, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    with cpu_threads_beside_gpu(torch.device("cuda")):
        assert torch.get_num_threads() == CPU_THREADS_BESIDE_GPU


def test_the_cap_is_restored_when_training_fails(eight_threads, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with pytest.raises(RuntimeError), cpu_threads_beside_gpu(torch.device("cuda", 0)):
        raise RuntimeError("a failed step")
    assert torch.get_num_threads() == 8


def test_fewer_threads_than_the_cap_are_kept(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with torch_threads(1), cpu_threads_beside_gpu(torch.device("cuda")):
        assert torch.get_num_threads() == 1


@pytest.mark.parametrize("device, env", [("cpu", None), ("cuda", "12")])
def test_the_cpu_and_an_explicit_omp_num_threads_are_left_alone(eight_threads, monkeypatch, device, env):
    if env is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", env)
    with cpu_threads_beside_gpu(torch.device(device)):
        assert torch.get_num_threads() == 8


@pytest.mark.timeout(300)
def test_both_training_stages_run_inside_the_cap(synthetic, tmp_path, monkeypatch):
    """Stage pretrain (PretrainTrainer) and stage base (StageTrainer) each train inside cpu_threads_beside_gpu, given
    the run's device: a trainer that skipped it would keep torch's one thread a core beside a GPU."""
    import graphtx.train.loop as loop
    import graphtx.train.pretrain_graph as pretrain_graph

    entered: list[tuple[str, str]] = []

    def recording(stage: str):
        @contextlib.contextmanager
        def cap(device: torch.device) -> Iterator[None]:
            entered.append((stage, device.type))
            yield

        return cap

    monkeypatch.setattr(pretrain_graph, "cpu_threads_beside_gpu", recording("pretrain"))
    monkeypatch.setattr(loop, "cpu_threads_beside_gpu", recording("base"))
    args = _train_args(synthetic, tmp_path / "run", "--stages", "pretrain,base", "--max-epochs", "1", "--no-rank-fit")
    assert main([*args, "--device", "cpu"]) == 0
    assert ("pretrain", "cpu") in entered and ("base", "cpu") in entered, entered
