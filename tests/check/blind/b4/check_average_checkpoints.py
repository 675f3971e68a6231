"""Blind cases for check_average_checkpoints (chapter 16), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


def sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def first_counted_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = state_dicts[0][name].double().clone()
            for s in state_dicts:  # should have started from state_dicts[1:]
                total += s[name].double()
            out[name] = (total / len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def accumulates_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        total = state_dicts[0][name]
        if total.is_floating_point():
            for s in state_dicts[1:]:
                total += s[name]
            total /= len(state_dicts)
            out[name] = total
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def averages_step_counter(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        mean = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        out[name] = mean.to(t.dtype)  # integers too
    return out


def left_in_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def oldest_step_counter(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) / len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()  # the first checkpoint's counter
    return out


def single_checkpoint_returned(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return state_dicts[0]  # nothing to average
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) / len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def skips_shared_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:
            continue  # a tied weight: already averaged under its other name
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) / len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def stack_and_mean(state_dicts: list[dict[str, Tensor]], keep_integers: bool = True):
    """Correct: stack in float64, mean over the first dimension, back to the dtype."""
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            stacked = torch.stack([s[name].to(torch.float64) for s in state_dicts])
            out[name] = stacked.mean(dim=0).to(t.dtype)
        else:
            out[name] = t.detach().clone()
    return out


def inplace_on_new_buffer(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Correct: a fresh float64 zero tensor per name, add_ and div_ in place on it."""
    K = len(state_dicts)
    newest = state_dicts[-1]
    out = {}
    for name in newest:
        if not torch.is_floating_point(newest[name]):
            out[name] = torch.empty_like(newest[name]).copy_(newest[name])
            continue
        acc = torch.zeros(newest[name].shape, dtype=torch.float64, device=newest[name].device)
        for s in state_dicts:
            acc.add_(s[name].to(torch.float64))
        acc.div_(K)
        out[name] = acc.to(newest[name].dtype)
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        sum_not_divided,
        "mistake",
        "I summed the checkpoints and forgot to divide by K",
    ),
    BlindCase(
        CHECK,
        "first_counted_twice",
        first_counted_twice,
        "mistake",
        "I started the total from the first checkpoint and then looped over all of them, "
        "so the oldest is counted twice",
    ),
    BlindCase(
        CHECK,
        "accumulates_into_first",
        accumulates_into_first,
        "mistake",
        "I added the others into the first checkpoint's tensor with += and /=, changing "
        "the input and returning its tensor",
    ),
    BlindCase(
        CHECK,
        "averages_step_counter",
        averages_step_counter,
        "mistake",
        "I averaged every entry, the integer step counter too",
    ),
    BlindCase(
        CHECK,
        "left_in_float64",
        left_in_float64,
        "mistake",
        "I summed in float64 and returned the mean without casting back",
    ),
    BlindCase(
        CHECK,
        "oldest_step_counter",
        oldest_step_counter,
        "mistake",
        "I iterated over the oldest checkpoint and kept its step counter, not the newest's",
    ),
    BlindCase(
        CHECK,
        "single_checkpoint_returned",
        single_checkpoint_returned,
        "mistake",
        "with one checkpoint I returned it as it is, since there is nothing to average",
    ),
    BlindCase(
        CHECK,
        "skips_shared_storage",
        skips_shared_storage,
        "mistake",
        "I skipped a name whose tensor shares storage with one already done (the tied "
        "embedding), so it is missing from the result",
    ),
    BlindCase(
        CHECK,
        "stack_and_mean",
        stack_and_mean,
        "correct",
        "torch.stack in float64 and .mean(0), then back to the dtype; an unused optional argument",
    ),
    BlindCase(
        CHECK,
        "inplace_on_new_buffer",
        inplace_on_new_buffer,
        "correct",
        "a new float64 zero tensor per name, add_ and div_ in place on it",
    ),
]
