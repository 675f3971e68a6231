"""Dropout whose random masks are cheap to draw on a CPU.

On a CPU, ``nn.Dropout`` draws its mask with one call of a serial random-number generator per
element. Our ``tiny`` translator is small enough for that to show: profiling its training step
on 2 cores (``benchmarks/cpu_step.py``), drawing the masks took about a sixth of the step's time.

``PackedDropout`` draws one 64-bit random number for every four elements and reads it as four
16-bit numbers, each uniform over the 65,536 values; an element is dropped when its number falls
among the lowest ``round(p * 65536)`` of them. That is the same Bernoulli mask, with ``p`` rounded
to a multiple of 1/65,536 (0.1 becomes 0.100006) and the kept values scaled by ``1 / (1 - p)`` of
that rounded ``p``, so the expected output is still the input. Forward and backward together
cost about a third of ``nn.Dropout``'s. It draws from PyTorch's default generator, so
``torch.manual_seed`` makes runs repeat as before, though with other masks than
``nn.Dropout``'s. On a GPU, whose generator fills a mask in parallel, it is ``nn.Dropout``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["PackedDropout", "packed_keep_mask", "use_packed_dropout"]

LEVELS = 65536  # the values of one 16-bit quarter of a random 64-bit number


def packed_keep_mask(x: Tensor, p: float) -> Tensor:
    """A dropout mask for ``x``: ``1 / (1 - p')`` with probability ``1 - p'``, else 0, where
    ``p' = round(p * 65536) / 65536``. Same shape, dtype and device as ``x``."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability must be in [0, 1), got {p}")
    dropped_levels = round(p * LEVELS)
    if dropped_levels >= LEVELS:
        raise ValueError(f"p={p} rounds to 1 at a resolution of 1/{LEVELS}; use nn.Dropout")
    n = x.numel()
    words = torch.empty((n + 3) // 4, dtype=torch.int64, device=x.device)
    words.random_(-(2**63), 2**63 - 1)  # uniform 64-bit numbers (the top one excluded)
    quarters = words.view(torch.int16)[:n].view(x.shape)  # each uniform over [-32768, 32767]
    keep = quarters >= -(LEVELS // 2) + dropped_levels
    return keep.to(x.dtype).mul_(LEVELS / (LEVELS - dropped_levels))


class PackedDropout(nn.Dropout):
    """``nn.Dropout`` with masks from ``packed_keep_mask`` on the CPU (module docstring)."""

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0 or x.device.type != "cpu" or self.inplace:
            return super().forward(x)
        return x * packed_keep_mask(x, self.p)


def use_packed_dropout(model: nn.Module) -> int:
    """Replace every ``nn.Dropout`` inside ``model`` by a ``PackedDropout`` of the same
    probability, in place; return how many were replaced. The weights are untouched, and so is
    dropout on attention weights (a function call inside attention, not a module)."""
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is nn.Dropout:
                packed = PackedDropout(child.p, child.inplace).train(child.training)
                setattr(parent, name, packed)
                replaced += 1
    return replaced
