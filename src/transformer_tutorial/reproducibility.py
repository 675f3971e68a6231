"""Seeds, thread counts and a chapter clock.

Hand-written (not generated from a notebook).

Seeding makes a notebook print the same numbers run after run *on one machine*. It does not make
them equal across machines: a float result depends on the CPU's kernels (vector width, summation
order, the BLAS library's code path), and training turns the last bit into different weights. The
book therefore compares only hardware-independent outputs and asserts every measured claim with a
margin (see the preface, "Numbers that vary").
"""

from __future__ import annotations

import os
import random
import time

import numpy as np
import torch


def seed_everything(seed: int = 0, threads: int | None = None) -> torch.Generator:
    """Seed Python, NumPy and PyTorch, and optionally fix PyTorch's CPU thread count.

    Args:
        seed: the seed for every random number generator.
        threads: intra-op threads for PyTorch on the CPU. ``None`` (the default) leaves the
            count alone (PyTorch uses ``OMP_NUM_THREADS`` or the number of cores); chapters
            that train tiny models pass ``1``, which is faster for them.

    Returns:
        A ``torch.Generator`` seeded with ``seed``, for code that wants its own stream.
    """
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if threads is not None:
        torch.set_num_threads(threads)
    return torch.Generator().manual_seed(seed)


class ChapterClock:
    """Measures how long a notebook took: wall time and the CPU time of this process.

    Start it in a chapter's first cells and print it in the last one::

        clock = ChapterClock()
        ...
        print(clock)  # "this chapter ran in 41 s (CPU time 52 s, 2 threads)"

    CPU time adds up every thread of the process, so with two threads it can exceed wall time.
    """

    def __init__(self) -> None:
        self.wall_start = time.perf_counter()
        self.cpu_start = time.process_time()

    @property
    def wall_seconds(self) -> float:
        return time.perf_counter() - self.wall_start

    @property
    def cpu_seconds(self) -> float:
        return time.process_time() - self.cpu_start

    def __str__(self) -> str:
        threads = torch.get_num_threads()
        return (
            f"this chapter ran in {self.wall_seconds:.0f} s "
            f"(CPU time {self.cpu_seconds:.0f} s, {threads} thread{'s' * (threads > 1)})"
        )
