"""Blind cases for check_average_checkpoints (chapter 16)."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


def avg_sum_only(state_dicts):
    out = {}
    for name, v in state_dicts[-1].items():
        if v.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts)  # forgot / K
        else:
            out[name] = v.clone()
    return out


def avg_last_only(state_dicts):
    return {name: v.clone() for name, v in state_dicts[-1].items()}


def avg_divide_k_minus_1(state_dicts):
    K = len(state_dicts)
    out = {}
    for name, v in state_dicts[-1].items():
        if v.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts) / max(K - 1, 1)
        else:
            out[name] = v.clone()
    return out


def avg_step_averaged(state_dicts):
    out = {}
    for name in state_dicts[0]:
        stacked = torch.stack([sd[name].double() for sd in state_dicts])
        out[name] = stacked.mean(0).to(state_dicts[0][name].dtype)  # the step counter too
    return out


def avg_in_place(state_dicts):
    out = state_dicts[0]  # accumulates into the first checkpoint
    for sd in state_dicts[1:]:
        for name, v in sd.items():
            if v.is_floating_point():
                out[name] += v
            else:
                out[name] = v
    for name, v in out.items():
        if v.is_floating_point():
            v /= len(state_dicts)
    return out


def avg_float64(state_dicts):
    out = {}
    for name, v in state_dicts[-1].items():
        if v.is_floating_point():
            out[name] = torch.stack([sd[name].double() for sd in state_dicts]).mean(
                0
            )  # stays float64
        else:
            out[name] = v.clone()
    return out


def avg_deepcopy_tied_twice(state_dicts):
    out = copy.deepcopy(state_dicts[0])  # keeps the tied names as one tensor
    for sd in state_dicts[1:]:
        for name, v in sd.items():
            if v.is_floating_point():
                out[name] += v
            else:
                out[name] = v.clone()
    for name, v in out.items():
        if v.is_floating_point():
            out[name] = v / len(state_dicts)
    return out


def avg_dedup_by_pointer(state_dicts):
    out, seen = {}, set()
    for name, v in state_dicts[-1].items():
        if v.data_ptr() in seen:
            continue  # skip the tied copy
        seen.add(v.data_ptr())
        if v.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = v.clone()
    return out


def avg_skip_unchanged(state_dicts):
    out = {}
    for name, v in state_dicts[-1].items():
        if not v.is_floating_point() or all(torch.equal(v, sd[name]) for sd in state_dicts):
            out[name] = v  # nothing to average: keep the tensor itself
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
    return out


def avg_int_from_oldest(state_dicts):
    out = {}
    for name, v in state_dicts[0].items():
        if v.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = v.clone()  # the oldest checkpoint's counter
    return out


def avg_star_args(*state_dicts):
    out = {}
    for name, v in state_dicts[-1].items():
        out[name] = (
            torch.stack([sd[name] for sd in state_dicts]).mean(0)
            if v.is_floating_point()
            else v.clone()
        )
    return out


def avg_running_double(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out: dict[str, Tensor] = {}
    for name, last in newest.items():
        if not torch.is_floating_point(last):
            out[name] = last.detach().clone()
            continue
        total = torch.zeros_like(last, dtype=torch.float64)
        for sd in state_dicts:
            total += sd[name].to(torch.float64)
        out[name] = (total / len(state_dicts)).to(last.dtype)
    return out


def avg_stack_mean(state_dicts, *, keep_integers_from: int = -1):
    result = {}
    for name in state_dicts[0].keys():
        tensors = [sd[name].detach() for sd in state_dicts]
        if tensors[0].dtype.is_floating_point:
            result[name] = torch.stack(tensors).double().mean(dim=0).to(tensors[0].dtype)
        else:
            result[name] = tensors[keep_integers_from].clone()
    return result


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_only,
        "mistake",
        "sums the checkpoints' weights and forgets to divide by K",
    ),
    BlindCase(
        CHECK,
        "last_checkpoint_only",
        avg_last_only,
        "mistake",
        "returns a copy of the last checkpoint instead of the mean",
    ),
    BlindCase(
        CHECK,
        "divides_by_k_minus_1",
        avg_divide_k_minus_1,
        "mistake",
        "divides the sum by K - 1 instead of K",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "averages every entry, the integer step counter included",
    ),
    BlindCase(
        CHECK,
        "accumulates_into_first_input",
        avg_in_place,
        "mistake",
        "accumulates the sum in place into the first checkpoint's tensors",
    ),
    BlindCase(
        CHECK,
        "returns_float64",
        avg_float64,
        "mistake",
        "averages in float64 and forgets to cast back to each weight's dtype",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_weight_added_twice",
        avg_deepcopy_tied_twice,
        "mistake",
        "deep-copies the first checkpoint and adds in place, so the tied embedding/output tensor is added twice",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedup_by_pointer,
        "mistake",
        "skips tensors whose data_ptr it has seen, which drops the tied output weight's name",
    ),
    BlindCase(
        CHECK,
        "unchanged_tensors_shared",
        avg_skip_unchanged,
        "mistake",
        "returns a tensor that is equal in every checkpoint (and the step) as the input tensor itself, sharing memory",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_int_from_oldest,
        "mistake",
        "keeps the integer step counter of the oldest checkpoint instead of the newest",
    ),
    BlindCase(
        CHECK,
        "slip_star_args",
        avg_star_args,
        "mistake",
        "takes the checkpoints as *state_dicts instead of one list",
    ),
    BlindCase(
        CHECK,
        "running_sum_float64",
        avg_running_double,
        "correct",
        "keeps a running float64 sum per entry and casts the mean back to the entry's dtype",
    ),
    BlindCase(
        CHECK,
        "stack_mean_keyword_option",
        avg_stack_mean,
        "correct",
        "stacks each entry, takes the float64 mean and casts back, with an optional keep_integers_from=-1",
    ),
]
