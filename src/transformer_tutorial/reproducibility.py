"""Seeds and thread counts, so that notebooks print the same numbers run after run.

Hand-written (not generated from a notebook).
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch


def seed_everything(seed: int = 0, threads: int | None = 2) -> torch.Generator:
    """Seed Python, NumPy and PyTorch, and fix PyTorch's CPU thread count.

    Args:
        seed: the seed for every random number generator.
        threads: intra-op threads for PyTorch on the CPU (``None`` leaves it alone). A fixed
            count keeps reductions in the same order on every machine of the same kind.

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
