"""Instruments for the tests: swap a piece of the training command in a child process (see
``armed_train.py``). The product code knows nothing of this."""

from __future__ import annotations

import torch

from transformer_tutorial.translator import train


def use_plain_sgd(scale: float = 100.0) -> None:
    """Train with plain SGD (rate ``scale`` times the schedule's) instead of Adam.

    An SGD update is linear in the gradient, so two summation orders of the same gradient (one
    process, or two whose gradients are averaged) give weights that differ by rounding alone,
    on every CPU. Adam divides each gradient by its own running size: where the true gradient
    is zero (a key bias, an embedding row no batch used), the rounding noise left in it becomes
    a full-size step whose sign depends on the summation order, so Adam's weights after a few
    steps compare only as well as the CPU's kernels happen to agree.
    """

    def make_sgd(model: torch.nn.Module, lr: float = 1.0, fused: bool | None = None):
        return torch.optim.SGD(model.parameters(), lr=lr * scale)

    train.make_optimizer = make_sgd  # the trainer looks the name up in its module
