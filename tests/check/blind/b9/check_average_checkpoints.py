"""Blind set B9, check_average_checkpoints (chapter 16): checkpoint averaging as readers write it."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).sum(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = tensor.clone()
            for i in range(1, K - 1):  # the newest is already in total
                total = total + state_dicts[i][name]
            out[name] = total / K
        else:
            out[name] = tensor.clone()
    return out


def avg_step_counter_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        mean = torch.stack([s[name].double() for s in state_dicts]).mean(0)
        out[name] = mean.to(tensor.dtype)  # the step counter too: mean step, truncated
    return out


def avg_in_place_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = state_dicts[0]
    for sd in state_dicts[1:]:
        for name in avg:
            if avg[name].is_floating_point():
                avg[name] += sd[name]
            else:
                avg[name] = sd[name].clone()
    for name in avg:
        if avg[name].is_floating_point():
            avg[name] /= len(state_dicts)
    return avg


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_then_add(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[-1])  # deepcopy keeps tied entries as one tensor
    for sd in state_dicts[:-1]:
        for name, tensor in avg.items():
            if tensor.is_floating_point():
                tensor += sd[name]
    for tensor in avg.values():
        if tensor.is_floating_point():
            tensor /= len(state_dicts)
    return avg


def avg_dedup_tied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:  # "the same tensor twice, skip it"
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_int_entry_shared(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor  # the newest step counter as it is
    return out


def avg_single_returned_as_is(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return dict(state_dicts[0])  # nothing to average
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_oldest_step_counter(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():  # iterate over the first checkpoint
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_first_and_last(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    first, last = state_dicts[0], state_dicts[-1]
    for name, tensor in last.items():
        if tensor.is_floating_point():
            out[name] = (first[name] + last[name]) / 2
        else:
            out[name] = tensor.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if torch.is_floating_point(tensor):
            out[name] = (
                torch.stack([s[name].double() for s in state_dicts]).mean(0).to(tensor.dtype)
            )
        else:
            out[name] = tensor.detach().clone()
    return out


def avg_running_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    means: dict[str, Tensor] = {}
    for i, sd in enumerate(state_dicts):
        for name, tensor in sd.items():
            if not tensor.is_floating_point():
                continue
            x = tensor.double()
            means[name] = x.clone() if i == 0 else means[name] + (x - means[name]) / (i + 1)
    newest = state_dicts[-1]
    return {
        name: means[name].to(t.dtype) if t.is_floating_point() else t.clone()
        for name, t in newest.items()
    }


def avg_deepcopy_reassign(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[-1])
    K = len(state_dicts)
    for name in list(avg):
        if avg[name].is_floating_point():
            total = torch.zeros_like(avg[name], dtype=torch.float64)
            for sd in state_dicts:
                total = total + sd[name]
            avg[name] = (total / K).to(avg[name].dtype)  # a new tensor, not written in place
    return avg


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_not_divided,
        "mistake",
        "I stack and sum the checkpoints but forget to divide by K",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_skips_oldest,
        "mistake",
        "I start from the newest and add state_dicts[1:K-1], so the oldest checkpoint is left "
        "out while I still divide by K",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_counter_averaged,
        "mistake",
        "I average every entry, the integer step counter too (mean in float64, cast back)",
    ),
    BlindCase(
        CHECK,
        "in_place_into_first",
        avg_in_place_into_first,
        "mistake",
        "I accumulate with += into the first checkpoint's tensors and return that dict, so the "
        "input changes (and tied tensors are added twice)",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I sum in float64 for accuracy but forget to cast back to the entry's dtype",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_add",
        avg_deepcopy_then_add,
        "mistake",
        "copy.deepcopy of the newest, then += of the older ones per name and /= K: the tied "
        "embedding and output weight are one tensor in the copy, so it gets added and divided "
        "twice",
    ),
    BlindCase(
        CHECK,
        "dedup_tied_names",
        avg_dedup_tied,
        "mistake",
        "I skip a name whose tensor has a data_ptr already seen, so the second tied name is "
        "missing from the result",
    ),
    BlindCase(
        CHECK,
        "int_entry_shared",
        avg_int_entry_shared,
        "mistake",
        "the step counter is returned as the input tensor itself, not a copy",
    ),
    BlindCase(
        CHECK,
        "single_returned_as_is",
        avg_single_returned_as_is,
        "mistake",
        "with one checkpoint I return dict(state_dicts[0]): the same tensors as the input",
    ),
    BlindCase(
        CHECK,
        "oldest_step_counter",
        avg_oldest_step_counter,
        "mistake",
        "I loop over the oldest checkpoint's entries, so the step counter is the oldest's",
    ),
    BlindCase(
        CHECK,
        "first_and_last_only",
        avg_first_and_last,
        "mistake",
        "I average only the first and the last checkpoints, (first + last) / 2 (right for K = 2)",
    ),
    BlindCase(
        CHECK,
        "stack_mean_float64",
        avg_stack_mean,
        "correct",
        "torch.stack of the float64 copies, .mean(0), cast back; integer entries cloned",
    ),
    BlindCase(
        CHECK,
        "running_mean",
        avg_running_mean,
        "correct",
        "an incremental running mean in float64 over the checkpoints, cast back at the end",
    ),
    BlindCase(
        CHECK,
        "deepcopy_reassign",
        avg_deepcopy_reassign,
        "correct",
        "deepcopy of the newest, then every float entry replaced by a new mean tensor "
        "(never written in place)",
    ),
]
