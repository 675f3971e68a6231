"""Blind set B15, check_average_checkpoints (chapter 16): checkpoint averaging as readers
write it."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_no_divide(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts)  # the sum: forgot / K
        else:
            out[name] = t.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_off_by_one(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts[1:]) / (K - 1) if K > 1 else t.clone()
        else:
            out[name] = t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        mean = torch.stack([s[name].double() for s in state_dicts]).mean(0)
        out[name] = mean.to(t.dtype)  # the step counter too, rounded down
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    result = state_dicts[0]
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                result[name] += t
            else:
                result[name] = t.clone()
    for name, t in result.items():
        if t.is_floating_point():
            t /= len(state_dicts)
    return result


def avg_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_shares_memory(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point() and len(state_dicts) > 1:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t  # one checkpoint or an integer: nothing to average
    return out


def avg_tied_added_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out: dict[str, Tensor] = {}
    seen: dict[int, str] = {}
    for sd in state_dicts:
        for name, t in sd.items():
            if not t.is_floating_point():
                out[name] = t.clone()
                continue
            key = id(t)
            if key in seen and seen[key] != name:
                out[seen[key]] = out[seen[key]] + t / len(state_dicts)  # tied: one tensor
                continue
            seen[key] = name
            out[name] = out.get(name, torch.zeros_like(t)) + t / len(state_dicts)
    return out


def avg_tied_dropped(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out, done = {}, set()
    for name, t in newest.items():
        if t.data_ptr() in done:
            continue  # a tied weight: averaged already under its other name
        done.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) / len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_first_step(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():  # the oldest checkpoint's names and integers
        if t.is_floating_point():
            out[name] = torch.mean(torch.stack([s[name] for s in state_dicts]), dim=0)
        else:
            out[name] = t.clone()
    return out


def avg_weighted_by_position(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            # a running mean: new = (old + next) / 2, which weights the newest most
            acc = state_dicts[0][name].clone()
            for s in state_dicts[1:]:
                acc = (acc + s[name]) / 2
            out[name] = acc if K > 1 else acc
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack and mean in float64, back to the dtype; ints cloned from the newest."""
    newest = state_dicts[-1]
    return {
        name: (
            torch.stack([sd[name].to(torch.float64) for sd in state_dicts]).mean(dim=0).to(t.dtype)
            if torch.is_floating_point(t)
            else t.detach().clone()
        )
        for name, t in newest.items()
    }


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Deep-copies the newest checkpoint, then adds the others in place into the copy."""
    result = copy.deepcopy(state_dicts[-1])
    result = {name: t.clone() for name, t in result.items()}  # untie: one tensor per name
    for sd in state_dicts[:-1]:
        for name, t in result.items():
            if t.is_floating_point():
                t.add_(sd[name])
    for t in result.values():
        if t.is_floating_point():
            t.div_(len(state_dicts))
    return result


def avg_running_mean(state_dicts: list[dict[str, Tensor]], *, dtype=torch.float64):
    """An incremental mean m += (x - m) / n in float64; an extra keyword argument."""
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = torch.clone(t)
            continue
        m = torch.zeros(t.shape, dtype=dtype)
        for n, sd in enumerate(state_dicts, start=1):
            m += (sd[name].to(dtype) - m) / n
        out[name] = m.to(t.dtype)
    return out


CASES = [
    BlindCase(
        CHECK, "sum_not_mean", avg_no_divide, "mistake", "I summed the weights and forgot / K."
    ),
    BlindCase(
        CHECK,
        "last_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint, thinking it is the best one.",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_off_by_one,
        "mistake",
        "I averaged state_dicts[1:] over K - 1, leaving out the oldest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "step_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "accumulates_into_input",
        avg_in_place,
        "mistake",
        "I added the other checkpoints into the first one with += and divided it in place.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64,
        "mistake",
        "I summed in float64 for precision and forgot to cast back to the weights' dtype.",
    ),
    BlindCase(
        CHECK,
        "shares_input_memory",
        avg_shares_memory,
        "mistake",
        "For K = 1 and for integers I returned the input tensor itself, not a copy.",
    ),
    BlindCase(
        CHECK,
        "tied_added_twice",
        avg_tied_added_twice,
        "mistake",
        "I recognised tied weights by id() and added the second name's tensor into the first "
        "name's mean.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_tied_dropped,
        "mistake",
        "I skipped a tensor whose storage I had already averaged, so the tied output name "
        "is missing.",
    ),
    BlindCase(
        CHECK,
        "oldest_step_counter",
        avg_first_step,
        "mistake",
        "I looped over the oldest checkpoint's entries, so the step counter is the oldest one.",
    ),
    BlindCase(
        CHECK,
        "running_halving",
        avg_weighted_by_position,
        "mistake",
        "I averaged pairwise, acc = (acc + next) / 2, which is not the mean for K = 3.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "A dict comprehension with torch.stack(...).mean(0) in float64.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_accumulate",
        avg_deepcopy_accumulate,
        "correct",
        "Deep-copies the newest checkpoint, clones each entry, and accumulates in place into "
        "its own copies.",
    ),
    BlindCase(
        CHECK,
        "incremental_mean",
        avg_running_mean,
        "correct",
        "An incremental mean in float64, with an extra keyword-only dtype argument.",
    ),
]
