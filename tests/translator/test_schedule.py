"""The training command's learning-rate schedules: the paper's, and the linear fall to zero at
the end of the budget."""

from __future__ import annotations

import pytest
import torch

from transformer_tutorial.training import noam_lr
from transformer_tutorial.translator.options import build_parser, resolve_args
from transformer_tutorial.translator.schedule import (
    BudgetProgress,
    linear_to_budget,
    make_scheduler,
)


def rates(scheduler, optimizer, steps: int) -> list[float]:
    out = []
    for _ in range(steps):
        out.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return out


def optimizer_of(lr: float = 1.0) -> torch.optim.Optimizer:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)


def test_progress_is_the_largest_share_of_any_limit():
    progress = BudgetProgress(100, 10.0, None)
    assert progress(25) == 0.25
    progress.elapsed_s = 5 * 60  # half the minutes, a quarter of the steps
    assert progress(25) == 0.5
    progress.elapsed_s = 20 * 60
    assert progress(25) == 1.0  # never beyond the end


def test_linear_schedule_peaks_where_the_paper_does_and_ends_at_zero():
    progress = BudgetProgress(200, None, None)
    optimizer = optimizer_of(lr=0.5)
    scheduler = make_scheduler("linear", optimizer, d_model=64, warmup=20, progress=progress)
    lr = rates(scheduler, optimizer, 200)
    peak = 0.5 * noam_lr(20, 64, 20)
    assert max(lr) == pytest.approx(peak * (1 - 19 / 200))  # the step of the warm-up's end
    assert lr.index(max(lr)) == 19  # step 20 (lr[0] is step 1's)
    assert all(a < b for a, b in zip(lr[:19], lr[1:20], strict=False))  # warm-up rises
    assert all(a > b for a, b in zip(lr[19:], lr[20:], strict=False))  # then falls ...
    assert lr[-1] == pytest.approx(peak * (1 / 200))  # ... to one step before zero
    assert linear_to_budget(201, 64, 20, progress) == 0.0


def test_linear_schedule_follows_the_clock_when_time_is_the_budget():
    progress = BudgetProgress(None, 1.0, None)
    peak = noam_lr(10, 32, 10)
    progress.elapsed_s = 45.0  # three quarters of a minute
    assert linear_to_budget(50, 32, 10, progress) == pytest.approx(peak * 0.25)


def test_inverse_sqrt_is_the_papers_schedule():
    optimizer = optimizer_of()
    scheduler = make_scheduler("inverse-sqrt", optimizer, d_model=64, warmup=10)
    lr = rates(scheduler, optimizer, 30)
    assert lr == pytest.approx([noam_lr(s, 64, 10) for s in range(1, 31)])


def test_linear_schedule_needs_a_budget():
    with pytest.raises(ValueError, match="--max-steps, --max-minutes or --epochs"):
        BudgetProgress(None, None, None)
    with pytest.raises(ValueError, match="unknown schedule"):
        make_scheduler("cosine", optimizer_of(), 64, 10)


def test_the_option_is_checked_and_kept_on_resume(tmp_path):
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["--lr-schedule", "cosine"])
    args = resolve_args(parser.parse_args(["--run-dir", str(tmp_path)]))
    assert args.lr_schedule == "linear"  # the tiny preset's
    (tmp_path / "args.json").write_text('{"lr_schedule": "inverse-sqrt"}')
    argv = ["--run-dir", str(tmp_path), "--resume", "--lr-schedule", "linear"]
    with pytest.raises(ValueError, match="--lr-schedule"):
        resolve_args(parser.parse_args(argv), {"lr_schedule", "run_dir", "resume"})
