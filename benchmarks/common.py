"""Shared helpers of the benchmark scripts: timing, the environment record, tables, JSON.

Not a test and not part of the package: each script in this folder prints a markdown table
and, with ``--json PATH``, writes the same numbers together with where they were measured.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from transformer_tutorial.runtime import cpu_name, git_commit, pick_device

ROOT = Path(__file__).resolve().parents[1]


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work; a CUDA kernel launch returns before the kernel has run."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_seconds(
    fn: Callable[[], object], device: torch.device, warmup: int, repeats: int
) -> tuple[float, list[float]]:
    """Run ``fn`` ``warmup`` times untimed, then ``repeats`` times timed; return the median
    and all timed runs, in seconds. The median ignores the odd slow run caused by another
    process; the warm-up runs pay for one-off costs (allocator growth, kernel selection)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    for _ in range(warmup):
        fn()
    synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def interleaved_median_seconds(
    fns: dict[str, Callable[[], object]],
    device: torch.device,
    warmup: int,
    repeats: int,
    before: Callable[[], object] = lambda: None,
) -> dict[str, float]:
    """Like ``median_seconds`` for several functions, timed in turn within each repeat, so that
    a change in the machine's load during the benchmark hits all of them alike. ``before`` runs
    untimed before each timed call (several processes' barrier, so that they start together)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    synchronize(device)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            before()
            start = time.perf_counter()
            fn()
            synchronize(device)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def resolve_device(name: str) -> torch.device:
    """``cpu``, ``cuda``, ``mps`` or ``auto``, as the training command picks them; a device that
    is not there ends the script with the reason."""
    try:
        return pick_device(name)
    except ValueError as err:
        raise SystemExit(f"{err} (torch {torch.__version__})") from None


def environment(device: torch.device) -> dict:
    """Where a measurement was taken: hardware, software, threads and machine load."""
    info = {
        "commit": git_commit(ROOT) or "unknown",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "device": str(device),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "load_average": [round(x, 2) for x in os.getloadavg()]
        if hasattr(os, "getloadavg")
        else None,
    }
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["cuda"] = torch.version.cuda
    return info


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured markdown table; floats are printed as given (format them first)."""
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def command_line(script: str, argv: Sequence[str] | None) -> str:
    """How the benchmark was run, for its JSON: ``python benchmarks/<script>.py <arguments>``."""
    return f"python benchmarks/{script}.py " + " ".join(sys.argv[1:] if argv is None else argv)


def write_json(path: str | os.PathLike | None, payload: dict) -> None:
    """Write ``payload`` as indented JSON (creating the folder); do nothing for ``None``."""
    if path is None:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {path}")
