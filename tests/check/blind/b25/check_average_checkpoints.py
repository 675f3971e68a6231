"""Blind set B25, check_average_checkpoints (chapter 16): the mean of the last K checkpoints as
readers write it."""

from __future__ import annotations

import copy
from functools import reduce

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_divide_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest, K = state_dicts[-1], len(state_dicts)
    out = {}
    for name, tensor in newest.items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / max(K - 1, 1)).to(tensor.dtype)  # K - 1 gaps between them
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[0])  # a copy, so the inputs stay as they are
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


def avg_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    first = state_dicts[0]
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            acc = first[name]
            for sd in state_dicts[1:]:
                acc.add_(sd[name])
            out[name] = (acc / len(state_dicts)).clone()
        else:
            out[name] = tensor.clone()
    return out


def avg_int_kept_as_is(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor  # the step counter is not averaged, just kept
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([s[name].double() for s in state_dicts])
        out[name] = stacked.mean(dim=0).to(state_dicts[-1][name].dtype)
    return out


def avg_stack_mean_wrong_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            stacked = torch.stack([s[name] for s in state_dicts], dim=-1)  # (..., K)
            out[name] = stacked.mean(dim=0)
        else:
            out[name] = tensor.clone()
    return out


def avg_always_float32(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).float()  # back from float64
        else:
            out[name] = tensor.clone()
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_running_ema(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.clone() for name, t in state_dicts[0].items()}
    for sd in state_dicts[1:]:
        for name, tensor in sd.items():
            if tensor.is_floating_point():
                out[name] = (out[name] + tensor) / 2  # running average of the checkpoints
            else:
                out[name] = tensor.clone()
    return out


def avg_unique_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:
            continue  # a tied weight: already averaged under its first name
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_skip_unchanged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if not tensor.is_floating_point():
            out[name] = tensor.clone()
        elif all(torch.equal(s[name], tensor) for s in state_dicts):
            out[name] = tensor  # the same in every checkpoint: nothing to average
        else:
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
    return out


def avg_newest_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(state_dicts[-1][name].double() for _ in range(K)).div(K)
            out[name] = out[name].to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if torch.is_floating_point(tensor):
            stacked = torch.stack([sd[name].to(torch.float64) for sd in state_dicts])
            out[name] = stacked.mean(dim=0).to(tensor.dtype)
        else:
            out[name] = tensor.detach().clone()
    return out


def avg_accumulate_fresh(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    acc = {
        name: torch.zeros_like(t, dtype=torch.float64)
        for name, t in newest.items()
        if t.is_floating_point()
    }
    for sd in state_dicts:
        for name in acc:
            acc[name].add_(sd[name].to(torch.float64))
    out = {}
    for name, t in newest.items():
        if name in acc:
            out[name] = acc[name].div_(len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_keep_ties(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Tied names share one new tensor, as in the model they came from."""
    out: dict[str, Tensor] = {}
    done: dict[int, Tensor] = {}
    for name, tensor in state_dicts[-1].items():
        key = id(tensor)
        if key not in done:
            if tensor.is_floating_point():
                total = torch.zeros(tensor.shape, dtype=torch.float64)
                for sd in state_dicts:
                    total = total + sd[name].double()
                done[key] = (total / len(state_dicts)).to(tensor.dtype)
            else:
                done[key] = tensor.clone()
        out[name] = done[key]
    return out


def avg_reduce(
    state_dicts: list[dict[str, Tensor]], dtype: torch.dtype = torch.float64
) -> dict[str, Tensor]:
    """One dict comprehension with functools.reduce; an optional accumulation dtype."""
    K = len(state_dicts)
    return {
        name: (reduce(torch.add, (sd[name].to(dtype) for sd in state_dicts)) / K).to(t.dtype)
        if t.is_floating_point()
        else t.clone()
        for name, t in state_dicts[-1].items()
    }


CASES = [
    BlindCase(
        CHECK,
        "divide_by_k_minus_1",
        avg_divide_by_k_minus_1,
        "mistake",
        "I divided the sum by K - 1 (and by 1 when K = 1).",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_add_in_place",
        avg_deepcopy_accumulate,
        "mistake",
        "I deep-copied the first checkpoint and added the others into it with +=, then divided "
        "with /=; the tied embedding is one tensor in the copy, so it is added and divided "
        "twice.",
    ),
    BlindCase(
        CHECK,
        "accumulate_into_first_checkpoint",
        avg_into_first,
        "mistake",
        "I summed into the first checkpoint's tensors with add_ and cloned the mean, so the "
        "first checkpoint is changed.",
    ),
    BlindCase(
        CHECK,
        "step_counter_not_cloned",
        avg_int_kept_as_is,
        "mistake",
        "I kept the integer step counter as the newest checkpoint's tensor itself, not a copy.",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I looped over the first checkpoint's entries, so the step counter is the oldest one's.",
    ),
    BlindCase(
        CHECK,
        "everything_averaged",
        avg_step_averaged,
        "mistake",
        "I stacked every entry in float64, took the mean and cast back, the step counter too.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_wrong_dim",
        avg_stack_mean_wrong_dim,
        "mistake",
        "I stacked the checkpoints along the last dimension but took the mean over dim=0.",
    ),
    BlindCase(
        CHECK,
        "cast_back_to_float32",
        avg_always_float32,
        "mistake",
        "I summed in float64 and cast back with .float(), whatever the entry's dtype was.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I summed in float64 and forgot to cast the mean back to the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "running_average",
        avg_running_ema,
        "mistake",
        "I averaged as I went, new = (old + checkpoint) / 2, which weights the newest most.",
    ),
    BlindCase(
        CHECK,
        "tied_name_skipped",
        avg_unique_tensors,
        "mistake",
        "I skipped a name whose tensor I had already seen (by data_ptr), so the tied output "
        "weight is missing.",
    ),
    BlindCase(
        CHECK,
        "unchanged_tensor_kept",
        avg_skip_unchanged,
        "mistake",
        "A tensor equal in every checkpoint needs no averaging, so I kept the newest one's.",
    ),
    BlindCase(
        CHECK,
        "newest_summed_k_times",
        avg_newest_only,
        "mistake",
        "In the sum I indexed state_dicts[-1] instead of the loop's checkpoint, so the result "
        "is the newest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "stack_in_float64",
        avg_stack_float64,
        "correct",
        "torch.stack of the float64 tensors, mean over dim 0, back to the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "fresh_float64_accumulators",
        avg_accumulate_fresh,
        "correct",
        "New float64 zeros per name, add_ every checkpoint, div_ by K, then cast.",
    ),
    BlindCase(
        CHECK,
        "tied_names_share_result",
        avg_keep_ties,
        "correct",
        "The mean computed once per tensor; tied names get the same new tensor.",
    ),
    BlindCase(
        CHECK,
        "reduce_comprehension",
        avg_reduce,
        "correct",
        "One dict comprehension, functools.reduce(torch.add, ...) / K; an extra accumulation "
        "dtype argument.",
    ),
]
