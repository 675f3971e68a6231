"""Blind cases for check_average_checkpoints (chapter 16), written from the chapter's text only."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---- mistakes -------------------------------------------------------------------------------


def sum_not_divided(state_dicts):
    out = {}
    for name, newest in state_dicts[-1].items():
        if newest.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).sum(0)
        else:
            out[name] = newest.clone()
    return out


def only_last(state_dicts):
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def first_counted_twice(state_dicts):
    out = {name: t.clone() for name, t in state_dicts[0].items()}
    for sd in state_dicts:  # should have been state_dicts[1:]
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] += t
    K = len(state_dicts)
    for name, t in out.items():
        if t.is_floating_point():
            out[name] = t / K
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def step_averaged(state_dicts):
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([sd[name] for sd in state_dicts])
        if stacked.is_floating_point():
            out[name] = stacked.mean(0)
        else:
            out[name] = stacked.sum(0) // len(state_dicts)  # integer mean
    return out


def inputs_changed(state_dicts):
    out = state_dicts[0]  # accumulate into the first one
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] += t
    for name, t in out.items():
        if t.is_floating_point():
            out[name] = t / len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def float64_result(state_dicts):
    out = {}
    for name, newest in state_dicts[-1].items():
        if newest.is_floating_point():
            out[name] = torch.stack([sd[name].double() for sd in state_dicts]).mean(0)
        else:
            out[name] = newest.clone()
    return out


def deepcopy_then_add(state_dicts):
    out = copy.deepcopy(state_dicts[0])  # keeps the tied embedding as one tensor
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                out[name].add_(t)
    for name in out:
        if out[name].is_floating_point():
            out[name] = out[name] / len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def tied_name_dropped(state_dicts):
    out, seen = {}, set()
    for name, newest in state_dicts[-1].items():
        if newest.data_ptr() in seen:  # the same tensor again: skip it
            continue
        seen.add(newest.data_ptr())
        if newest.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = newest.clone()
    return out


def integer_entry_shared(state_dicts):
    out = {}
    for name, newest in state_dicts[-1].items():
        if newest.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = newest  # an int, nobody will change it
    return out


def single_checkpoint_returned_as_is(state_dicts):
    if len(state_dicts) == 1:
        return state_dicts[0]  # nothing to average
    out = {}
    for name, newest in state_dicts[-1].items():
        if newest.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = newest.clone()
    return out


def cat_instead_of_stack(state_dicts):
    out = {}
    for name, newest in state_dicts[-1].items():
        if newest.is_floating_point():
            out[name] = torch.cat([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = newest.clone()
    return out


# ---- reader's slip ------------------------------------------------------------------------------


def varargs(*state_dicts):
    out = {}
    for name, newest in state_dicts[-1].items():
        if newest.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = newest.clone()
    return out


# ---- correct variants ---------------------------------------------------------------------------


def stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, newest in state_dicts[-1].items():
        if torch.is_floating_point(newest):
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        else:
            out[name] = newest.clone()
    return out


def float64_accumulator(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name in state_dicts[-1]:
        newest = state_dicts[-1][name]
        if not newest.dtype.is_floating_point:
            out[name] = newest.detach().clone()
            continue
        acc = torch.zeros(newest.shape, dtype=torch.float64)
        for sd in state_dicts:
            acc += sd[name].double()
        out[name] = (acc / K).to(newest.dtype)
    return out


def tied_kept_tied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    done: dict[tuple, Tensor] = {}  # one result per distinct storage of the newest checkpoint
    out = {}
    for name, newest in state_dicts[-1].items():
        key = (newest.data_ptr(), tuple(newest.shape), newest.stride(), newest.dtype)
        if key not in done:
            if newest.is_floating_point():
                total = torch.zeros_like(newest)
                for sd in state_dicts:
                    total.add_(sd[name])
                done[key] = total.div_(len(state_dicts))
            else:
                done[key] = newest.clone()
        out[name] = done[key]
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        sum_not_divided,
        "mistake",
        "I summed the checkpoints' weights and forgot to divide by K",
    ),
    BlindCase(
        CHECK, "only_last", only_last, "mistake", "I returned a copy of the newest checkpoint only"
    ),
    BlindCase(
        CHECK,
        "first_counted_twice",
        first_counted_twice,
        "mistake",
        "I started from a copy of the first checkpoint and then added all K of them, so the first counts twice",
    ),
    BlindCase(
        CHECK,
        "step_averaged",
        step_averaged,
        "mistake",
        "I averaged the integer step counter too (integer division) instead of keeping the newest",
    ),
    BlindCase(
        CHECK,
        "inputs_changed",
        inputs_changed,
        "mistake",
        "I accumulated into the first state dict in place, changing the caller's checkpoint",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        float64_result,
        "mistake",
        "I averaged in float64 and forgot to convert back to each tensor's own dtype",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_add",
        deepcopy_then_add,
        "mistake",
        "I deep-copied the first state dict and added the others in place, so the tied weight is added once per name",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        tied_name_dropped,
        "mistake",
        "I skipped a name whose tensor I had already seen, so the tied output weight is missing",
    ),
    BlindCase(
        CHECK,
        "integer_entry_shared",
        integer_entry_shared,
        "mistake",
        "I returned the newest integer entries themselves, not copies",
    ),
    BlindCase(
        CHECK,
        "single_checkpoint_returned_as_is",
        single_checkpoint_returned_as_is,
        "mistake",
        "for a single checkpoint I returned the input dict itself",
    ),
    BlindCase(
        CHECK,
        "cat_instead_of_stack",
        cat_instead_of_stack,
        "mistake",
        "I used torch.cat instead of torch.stack before the mean over dim 0",
    ),
    BlindCase(
        CHECK,
        "varargs",
        varargs,
        "mistake",
        "I wrote the function as average(*state_dicts), taking the checkpoints as separate arguments",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        stack_mean,
        "correct",
        "I stacked each float entry over the checkpoints and took the mean; integers are cloned from the newest",
    ),
    BlindCase(
        CHECK,
        "float64_accumulator",
        float64_accumulator,
        "correct",
        "I summed in a float64 accumulator and converted the mean back to the entry's dtype",
    ),
    BlindCase(
        CHECK,
        "tied_kept_tied",
        tied_kept_tied,
        "correct",
        "I averaged each distinct tensor once and gave tied names the same new tensor",
    ),
]
