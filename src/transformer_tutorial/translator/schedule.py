"""Learning-rate schedules for a run with a budget.

``inverse-sqrt`` is the paper's schedule (chapter 14's ``noam_lr``): a linear warm-up, then a decay
with the inverse square root of the step. It never reaches zero, which suits a run that may go on
for days, and it knows nothing of when the run will stop.

``linear`` knows: after the same warm-up to the same peak, the rate falls in a straight line to
zero at the moment the budget is spent, whichever limit comes first -- ``--max-steps``,
``--max-minutes`` or ``--epochs``. A run of a fixed length does better when its last steps take
small, careful steps (Li, Yumer and Ramanan 2020, "Budgeted Training").

With ``--max-minutes`` the rate depends on the clock, so two runs on different machines (or
one machine under different load) take different rates at the same step: such a run is
reproducible in what it does with its time, not step for step. (Under ``torchrun`` every process
uses the same clock reading, the slowest process's, so that all take the same step.)
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..training import noam_lr, noam_scheduler

SCHEDULES = ("inverse-sqrt", "linear")


class BudgetProgress:
    """How much of the run's budget is spent, from 0 to 1, at a given step.

    Args:
        max_steps: the step budget (``None``: none).
        max_minutes: the time budget (``None``: none); the time spent is ``elapsed_s``, which
            the run's ``TimeBudget`` callback sets after every step (the same on every process).
        total_steps_of_epochs: the steps that ``--epochs`` passes take (``None``: no such limit).
    """

    def __init__(
        self,
        max_steps: int | None,
        max_minutes: float | None,
        total_steps_of_epochs: int | None,
    ) -> None:
        if max_steps is None and max_minutes is None and total_steps_of_epochs is None:
            raise ValueError(
                "the linear schedule falls to zero at the end of the budget; give --max-steps, "
                "--max-minutes or --epochs, or use --lr-schedule inverse-sqrt."
            )
        self.max_steps, self.max_minutes = max_steps, max_minutes
        self.total_steps_of_epochs = total_steps_of_epochs
        self.elapsed_s = 0.0  # the run's time so far, counted from its start

    def __call__(self, step: int) -> float:
        spent = [
            step / limit
            for limit in (self.max_steps, self.total_steps_of_epochs)
            if limit is not None
        ]
        if self.max_minutes is not None:
            spent.append(self.elapsed_s / (60 * self.max_minutes))
        return min(max(spent), 1.0)


def linear_to_budget(
    step: int, d_model: int, warmup: int, progress: Callable[[int], float]
) -> float:
    """The ``linear`` schedule's rate factor at ``step`` (from 1): the warm-up of ``noam_lr`` to
    its peak, times the share of the budget left before this step, ``1 - progress(step - 1)``,
    so that the last step of a step budget still moves and the rate is zero once it is spent."""
    peak = noam_lr(warmup, d_model, warmup)
    return peak * min(step / warmup, 1.0) * (1.0 - progress(step - 1))


def make_scheduler(
    name: str,
    optimizer: torch.optim.Optimizer,
    d_model: int,
    warmup: int,
    progress: Callable[[int], float] | None = None,
) -> torch.optim.lr_scheduler.LambdaLR:
    """A ``LambdaLR`` for schedule ``name`` (see ``SCHEDULES``); the optimizer's ``lr`` is the
    schedule's factor. ``progress`` is needed by ``linear`` only."""
    if name == "inverse-sqrt":
        return noam_scheduler(optimizer, d_model, warmup)
    if name == "linear":
        if progress is None:
            raise ValueError("the linear schedule needs the run's budget (progress)")
        return torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: linear_to_budget(step + 1, d_model, warmup, progress)
        )
    raise ValueError(f"unknown schedule {name!r}; choose one of {', '.join(SCHEDULES)}.")
