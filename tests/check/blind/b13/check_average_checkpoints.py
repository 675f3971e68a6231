"""Blind set B13, check_average_checkpoints (chapter 16): checkpoint averaging as readers write it."""

from __future__ import annotations

import copy
from collections import OrderedDict
from functools import reduce

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_no_divide(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_off_by_one(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = torch.zeros_like(t)
            for sd in state_dicts[1:]:  # the first one is the starting point
                total += sd[name]
            out[name] = total / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        stacked = torch.stack([sd[name] for sd in state_dicts])
        out[name] = (stacked.double().mean(0)).to(t.dtype)  # ints too
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = state_dicts[0]
    names = [n for n, t in out.items() if t.is_floating_point()]
    for name in names:
        for sd in state_dicts[1:]:
            out[name] += sd[name]
        out[name] /= len(state_dicts)
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
    return {n: t.clone() for n, t in out.items()}


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # keeps tied entries as one tensor
    for name, t in out.items():
        if t.is_floating_point():
            for sd in state_dicts[1:]:
                t.add_(sd[name])
            t.div_(len(state_dicts))
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_dedup_tied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # the tied copy: skip it, it is the same weight
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = (
                sum(sd[name].double() for sd in state_dicts).div(len(state_dicts)).to(t.dtype)
            )
        else:
            out[name] = t.clone()
    return out


def avg_shares_memory(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return dict(state_dicts[0])  # nothing to average
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t  # the step counter as it is
    return out


def avg_oldest_step(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()  # from the first checkpoint
    return out


def avg_int_as_float(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.float()  # keep the newest step
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) in each tensor's own dtype; clone for integers."""
    return {
        name: torch.stack([sd[name] for sd in state_dicts]).mean(0)
        if t.is_floating_point()
        else t.clone()
        for name, t in state_dicts[-1].items()
    }


def avg_reduce_ordered(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """functools.reduce with torch.add into an OrderedDict, divided by K."""
    out = OrderedDict()
    K = len(state_dicts)
    for name, t in state_dicts[-1].items():
        if torch.is_floating_point(t):
            out[name] = torch.div(reduce(torch.add, [sd[name] for sd in state_dicts]) * 1.0, K)
            if K == 1:
                out[name] = out[name].clone()
        else:
            out[name] = t.detach().clone()
    return out


def avg_running_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A running mean over the checkpoints, on fresh copies (never touching the inputs)."""
    out = {n: t.clone() for n, t in state_dicts[0].items()}
    for i, sd in enumerate(state_dicts[1:], start=2):
        for name, t in out.items():
            if t.is_floating_point():
                t += (sd[name] - t) / i
            else:
                out[name] = sd[name].clone()
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_no_divide,
        "mistake",
        "I summed the checkpoints and forgot to divide by K.",
    ),
    BlindCase(
        CHECK,
        "last_checkpoint_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint only.",
    ),
    BlindCase(
        CHECK,
        "first_skipped",
        avg_off_by_one,
        "mistake",
        "I started from zeros and looped over state_dicts[1:], then divided by K.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "inputs_changed_in_place",
        avg_in_place,
        "mistake",
        "I accumulated into the first checkpoint's tensors with +=.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I summed in float64 for precision and forgot to cast back.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_accumulate,
        "mistake",
        "I deep-copied the first checkpoint and added in place; tied names share a tensor.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedup_tied,
        "mistake",
        "I skipped tensors already seen (by data_ptr), so a tied name is missing.",
    ),
    BlindCase(
        CHECK,
        "shares_memory",
        avg_shares_memory,
        "mistake",
        "With one checkpoint I return it as is, and the step counter is the input's tensor.",
    ),
    BlindCase(
        CHECK,
        "oldest_step_counter",
        avg_oldest_step,
        "mistake",
        "I took the integer step counter from the first (oldest) checkpoint.",
    ),
    BlindCase(
        CHECK,
        "step_counter_float",
        avg_int_as_float,
        "mistake",
        "I turned the step counter into a float when copying it.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) in the tensor's dtype, integers cloned.",
    ),
    BlindCase(
        CHECK,
        "reduce_add",
        avg_reduce_ordered,
        "correct",
        "functools.reduce(torch.add) into an OrderedDict, divided by K.",
    ),
    BlindCase(
        CHECK,
        "running_mean",
        avg_running_mean,
        "correct",
        "A running mean m += (x - m) / i on cloned tensors.",
    ),
]
