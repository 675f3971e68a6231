"""Blind set B6, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy
from functools import reduce

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def average_stack_everything(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    # one line for every entry: the step counter is an integer tensor too
    return {
        name: torch.stack([sd[name] for sd in state_dicts]).mean(dim=0) for name in state_dicts[-1]
    }


def average_ints_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    first = state_dicts[0]  # iterate over the first checkpoint's entries
    out = {}
    for name, tensor in first.items():
        if tensor.is_floating_point():
            out[name] = (
                torch.stack([sd[name].double() for sd in state_dicts]).mean(0).to(tensor.dtype)
            )
        else:
            out[name] = tensor.clone()  # the step counter of the oldest checkpoint
    return out


def average_floats_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    return {
        name: (sum(sd[name].double() for sd in state_dicts) / K).to(t.dtype)
        for name, t in state_dicts[-1].items()
        if t.is_floating_point()  # buffers of integers left out
    }


def average_running_ema(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = {name: t.clone() for name, t in state_dicts[0].items()}
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                avg[name] = 0.5 * avg[name] + 0.5 * t  # "average with the next one", in turn
            else:
                avg[name] = t.clone()
    return avg


def average_single_returned(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return state_dicts[0]  # nothing to average
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def average_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[-1])  # a copy, so the checkpoints stay as they are
    for name, t in avg.items():
        if t.is_floating_point():
            t.zero_()
    for sd in state_dicts:
        for name, t in avg.items():
            if t.is_floating_point():
                t.add_(sd[name])  # tied tensors share storage in the copy too
    for t in avg.values():
        if t.is_floating_point():
            t.div_(len(state_dicts))
    return avg


def average_first_forgotten(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        total = torch.zeros_like(t, dtype=torch.float64)
        for i in range(1, K):  # index 0 skipped by habit
            total += state_dicts[i][name]
        out[name] = (total / K).to(t.dtype)
    return out


def average_into_newest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = state_dicts[-1]  # accumulate into the newest checkpoint to save memory
    for sd in state_dicts[:-1]:
        for name, t in avg.items():
            if t.is_floating_point():
                t.add_(sd[name])
    for t in avg.values():
        if t.is_floating_point():
            t.div_(len(state_dicts))
    return avg


def average_skip_tied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:
            continue  # a tied weight: already averaged under its other name
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = t.clone()
    return out


def average_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name].double() for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out  # the means left in float64, "more precise"


# ---------------------------------------------------------------- correct variants


def average_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) in each tensor's own dtype; integer entries cloned."""
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if torch.is_floating_point(t):
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        else:
            out[name] = t.detach().clone()
    return out


def average_float64_accumulator(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """An accumulator of my own in float64, added to in place, divided, cast back."""
    K = len(state_dicts)
    result = {}
    for name, t in state_dicts[-1].items():
        if not t.dtype.is_floating_point:
            result[name] = t.clone()
            continue
        acc = torch.zeros(t.shape, dtype=torch.float64, device=t.device)
        for sd in state_dicts:
            acc.add_(sd[name].to(torch.float64))
        result[name] = acc.div_(K).to(t.dtype)
    return result


def average_reduce(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """functools.reduce with torch.add, then a division: every step makes a new tensor."""
    K = len(state_dicts)
    names = list(state_dicts[-1])
    out = {}
    for name in names:
        newest = state_dicts[-1][name]
        if newest.is_floating_point():
            total = reduce(torch.add, (sd[name].double() for sd in state_dicts))
            out[name] = torch.div(total, K).to(newest.dtype)
        else:
            out[name] = newest.clone()
    return out


CASES = [
    BlindCase(
        CHECK,
        "stack_mean_everything",
        average_stack_everything,
        "mistake",
        "I apply torch.stack(...).mean(0) to every entry, the integer step counter included.",
    ),
    BlindCase(
        CHECK,
        "int_from_oldest",
        average_ints_from_oldest,
        "mistake",
        "I loop over the oldest checkpoint's entries and keep its step counter, not the "
        "newest one's.",
    ),
    BlindCase(
        CHECK,
        "floats_only",
        average_floats_only,
        "mistake",
        "My dict comprehension keeps only the floating-point entries, so the integer step "
        "counter is missing from the result.",
    ),
    BlindCase(
        CHECK,
        "running_ema",
        average_running_ema,
        "mistake",
        "I average pairwise in turn, avg = 0.5 * avg + 0.5 * next, which weights the newer "
        "checkpoints more than the older ones when K > 2.",
    ),
    BlindCase(
        CHECK,
        "single_returned_as_is",
        average_single_returned,
        "mistake",
        "With one checkpoint I return its state dict itself, so the result shares its tensors "
        "with the input.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_accumulate",
        average_deepcopy_accumulate,
        "mistake",
        "I deep-copy the newest checkpoint, zero it and add every checkpoint in place; the "
        "tied embedding and output weights share storage in the copy, so they get every "
        "checkpoint added twice (and are divided by K twice).",
    ),
    BlindCase(
        CHECK,
        "first_checkpoint_forgotten",
        average_first_forgotten,
        "mistake",
        "I start the sum from zeros and loop from index 1, so the oldest checkpoint is left "
        "out but I still divide by K.",
    ),
    BlindCase(
        CHECK,
        "accumulate_into_newest",
        average_into_newest,
        "mistake",
        "To save memory I add the other checkpoints into the newest checkpoint's tensors in "
        "place and divide them there, changing the input (and the tied weight twice).",
    ),
    BlindCase(
        CHECK,
        "skip_tied_by_pointer",
        average_skip_tied,
        "mistake",
        "I skip a name whose tensor has the data_ptr of one already averaged, to avoid "
        "averaging tied weights twice, so the tied output weight is missing.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        average_float64_result,
        "mistake",
        "I average in float64 and return the float64 means without casting back.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_own_dtype",
        average_stack_mean,
        "correct",
        "torch.stack(...).mean(0) in the tensor's own dtype for floating entries; integer "
        "entries cloned from the newest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "float64_accumulator",
        average_float64_accumulator,
        "correct",
        "A float64 accumulator of my own, add_ of every checkpoint, div_ by K, cast back.",
    ),
    BlindCase(
        CHECK,
        "functools_reduce",
        average_reduce,
        "correct",
        "functools.reduce(torch.add, ...) over float64 copies, torch.div by K, cast back; "
        "integers cloned.",
    ),
]
