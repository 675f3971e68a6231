"""Tests of transformer_tutorial.runtime: device, precision, processes, and the record of where a
result was measured."""

from __future__ import annotations

import os
import subprocess

import pytest
import torch

from transformer_tutorial.runtime import (
    Runtime,
    cpu_name,
    git_commit,
    hardware,
    pick_device,
    pick_precision,
    setup_runtime,
)

NO_CUDA = not torch.cuda.is_available()


def test_auto_picks_the_best_device_there_is():
    device = pick_device("auto")
    if torch.cuda.is_available():
        assert device.type == "cuda"
    elif device.type != "mps":
        assert device == torch.device("cpu")
    assert pick_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(not NO_CUDA, reason="the error is for machines without a CUDA GPU")
def test_asking_for_a_gpu_that_is_not_there_says_what_to_do():
    with pytest.raises(ValueError, match="no CUDA GPU is visible; use --device auto or cpu"):
        pick_device("cuda")


def test_precision_auto_is_full_fp32_on_a_cpu_and_fp16_needs_a_gpu():
    cpu = torch.device("cpu")
    assert pick_precision("auto", cpu) is None
    assert pick_precision("fp32", cpu) is None
    assert pick_precision("bf16", cpu) is torch.bfloat16
    with pytest.raises(ValueError, match="fp16 needs a CUDA GPU"):
        pick_precision("fp16", cpu)


def test_one_process_is_rank_zero_of_one_and_needs_no_process_group(monkeypatch):
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    rt = setup_runtime("cpu", "bf16")
    assert (rt.rank, rt.world_size, rt.is_main, rt.distributed) == (0, 1, True, False)
    assert not torch.distributed.is_initialized()
    # Alone, a process agrees with itself: no collective call is made.
    assert rt.max_over_ranks(2.5) == 2.5 and rt.any_rank(True) and not rt.any_rank(False)
    rt.barrier()
    with rt.autocast():
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    with Runtime(torch.device("cpu")).autocast():  # fp32: autocast is a no-op
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    rt.close()


def test_the_hardware_record_names_the_machine():
    record = hardware(torch.device("cpu"), world_size=2)
    assert record["device"] == "cpu" and record["gpu"] is None and record["world_size"] == 2
    assert record["cpu_cores"] == os.cpu_count()
    assert record["torch_threads"] == torch.get_num_threads()
    assert record["cpu"] == cpu_name() and cpu_name().strip()


def test_git_commit_names_the_checkout_and_says_when_it_is_dirty(tmp_path):
    assert git_commit(tmp_path) is None  # not a checkout
    env = os.environ | {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
                        "GIT_COMMITTER_EMAIL": "a@b"}  # fmt: skip

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, check=True)  # fmt: skip
        return done.stdout.strip()

    git("init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("commit", "-q", "-m", "first")
    head = git("rev-parse", "HEAD")
    assert git_commit(tmp_path) == head
    (tmp_path / "new.txt").write_text("untracked files do not count\n")
    assert git_commit(tmp_path) == head
    (tmp_path / "a.txt").write_text("two\n")
    assert git_commit(tmp_path) == head + "-dirty"
