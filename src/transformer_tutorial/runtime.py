"""The run's environment: device, precision, processes, and where a result was measured.

One home for what the training command, the translation command, the environment check
(``python -m transformer_tutorial.doctor``) and the benchmarks all need to know about the
machine they run on. A support module: it imports nothing of the package, so the application
(``translator/``), ``doctor`` and ``benchmarks/`` can all use it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

import torch

PRECISIONS = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclasses.dataclass
class Runtime:
    """One process of a run: its device, its place among the processes, its autocast dtype."""

    device: torch.device
    rank: int = 0
    world_size: int = 1
    amp_dtype: torch.dtype | None = None  # None: full fp32

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def autocast(self) -> contextlib.AbstractContextManager:
        """``torch.autocast`` with the run's dtype (a no-op in fp32)."""
        dtype = self.amp_dtype or torch.float32
        return torch.autocast(self.device.type, dtype=dtype, enabled=self.amp_dtype is not None)

    def barrier(self) -> None:
        if self.distributed:
            torch.distributed.barrier()

    def any_rank(self, flag: bool) -> bool:
        """True on every process when ``flag`` is true on at least one (so all stop together)."""
        return self.max_over_ranks(1.0 if flag else 0.0) > 0 if self.distributed else flag

    def max_over_ranks(self, value: float) -> float:
        """The largest ``value`` of all processes, on every process (so all agree on it)."""
        if not self.distributed:
            return value
        t = torch.tensor([value], dtype=torch.float64, device=self.device)
        torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
        return float(t.item())

    def close(self) -> None:
        if self.distributed and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


def pick_device(name: str = "auto", local_rank: int = 0) -> torch.device:
    """``auto`` picks CUDA, then Apple's MPS, then the CPU; an explicit choice must exist."""
    has_mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "mps" if has_mps else "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("--device cuda: no CUDA GPU is visible; use --device auto or cpu.")
        return torch.device("cuda", local_rank % torch.cuda.device_count())
    if name == "mps" and not has_mps:
        raise ValueError("--device mps: Apple's MPS backend is not available; use auto or cpu.")
    return torch.device(name)


def pick_precision(name: str, device: torch.device) -> torch.dtype | None:
    """``auto``: bf16 on CUDA GPUs that support it, fp16 on older ones, fp32 elsewhere."""
    if name == "auto":
        if device.type != "cuda":
            return None
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if name == "fp16" and device.type != "cuda":
        raise ValueError("--precision fp16 needs a CUDA GPU (use bf16 or fp32 elsewhere).")
    return PRECISIONS[name]


def setup_runtime(device: str = "auto", precision: str = "auto") -> Runtime:
    """This process's runtime; under ``torchrun`` (``WORLD_SIZE`` > 1) it joins the process
    group: NCCL on CUDA, gloo on the CPU."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    chosen = pick_device(device, int(os.environ.get("LOCAL_RANK", "0")))
    if world_size > 1:
        if chosen.type == "cuda":
            torch.cuda.set_device(chosen)
        torch.distributed.init_process_group(backend="nccl" if chosen.type == "cuda" else "gloo")
    return Runtime(chosen, rank, world_size, pick_precision(precision, chosen))


def cpu_name() -> str:
    """The processor's model name (from /proc/cpuinfo on Linux)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def hardware(device: torch.device, world_size: int = 1) -> dict[str, Any]:
    """Where a result was measured: device, processor, cores, threads, GPU."""
    return {
        "device": str(device),
        "cpu": cpu_name(),
        "cpu_cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "world_size": world_size,
    }


def git_commit(where: str | os.PathLike | None = None) -> str | None:
    """The commit of the checkout (this package's, by default), with ``-dirty`` for local
    changes to tracked files; ``None`` outside a git checkout."""
    cwd = Path(where) if where is not None else Path(__file__).resolve().parent

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
        )
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty else "")
