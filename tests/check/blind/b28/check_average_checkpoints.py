"""Blind set B28, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy
from functools import reduce

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_divided_by_entries(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(newest)).to(tensor.dtype)  # the number to divide by
        else:
            out[name] = tensor.clone()
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    first = state_dicts[0]
    out = {}
    for name, tensor in first.items():
        if tensor.is_floating_point():
            out[name] = (
                torch.stack([s[name] for s in state_dicts]).double().mean(0).to(tensor.dtype)
            )
        else:
            out[name] = tensor.clone()  # the step counter of the first checkpoint
    return out


def avg_float_step_counter(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        stacked = torch.stack([s[name] for s in state_dicts]).double()
        out[name] = stacked.mean(dim=0).to(tensor.dtype)  # every entry, the counter too
    return out


def avg_in_place_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    averaged = state_dicts[0]
    for other in state_dicts[1:]:
        for name, tensor in averaged.items():
            if tensor.is_floating_point():
                tensor += other[name]
    for name, tensor in averaged.items():
        if tensor.is_floating_point():
            tensor /= len(state_dicts)
        else:
            averaged[name] = state_dicts[-1][name].clone()
    return averaged


def avg_single_returned(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return state_dicts[0]  # nothing to average
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_keeps_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name].double() for s in state_dicts]).mean(dim=0)
        else:
            out[name] = tensor.clone()
    return out


def avg_equal_kept_as_is(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        same = all(torch.equal(s[name], tensor) for s in state_dicts)
        if not tensor.is_floating_point() or same:
            out[name] = tensor  # as translator/checkpoint.py does
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = torch.zeros_like(tensor, dtype=torch.float64)
            for i in range(1, K):
                total += state_dicts[i][name]
            out[name] = (total / K).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_running_pairs(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.clone() for name, t in state_dicts[0].items()}
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] = (out[name] + t) / 2  # the mean of what I have and the next one
            else:
                out[name] = t.clone()
    return out


def avg_mean_without_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean().to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_accumulate_aliased(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # a copy, so the inputs are safe
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                out[name].add_(t)
    for name, t in out.items():
        if t.is_floating_point():
            t.div_(len(state_dicts))
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_float32_accumulator(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].float() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_tied_name_dropped(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out: dict[str, Tensor] = {}
    seen: set[int] = set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:
            continue  # the same tensor again: already averaged
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack and mean(dim=0) in float64, then back to each entry's dtype."""
    newest = state_dicts[-1]
    result = {}
    for key in newest:
        ref = newest[key]
        if torch.is_floating_point(ref):
            stacked = torch.stack([sd[key].to(torch.float64) for sd in state_dicts])
            result[key] = stacked.mean(dim=0).to(ref.dtype)
        else:
            result[key] = ref.detach().clone()
    return result


def avg_deepcopy_copy_into(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A deep copy of the newest checkpoint, with each mean written into it by copy_."""
    out = copy.deepcopy(state_dicts[-1])
    K = len(state_dicts)
    with torch.no_grad():
        for name, tensor in out.items():
            if tensor.is_floating_point():
                total = reduce(torch.add, [sd[name].double() for sd in state_dicts])
                tensor.copy_(total / K)
    return out


def avg_incremental_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A running mean m += (x - m) / (i + 1) in float64, new tensors at every step."""
    means: dict[str, Tensor] = {}
    for i, sd in enumerate(state_dicts):
        for name, t in sd.items():
            if not t.is_floating_point():
                continue
            x = t.double()
            means[name] = x.clone() if i == 0 else means[name] + (x - means[name]) / (i + 1)
    newest = state_dicts[-1]
    return {
        name: (means[name].to(t.dtype) if t.is_floating_point() else t.clone())
        for name, t in newest.items()
    }


CASES = [
    BlindCase(
        CHECK,
        "divided_by_entry_count",
        avg_divided_by_entries,
        "mistake",
        "I divided by len(newest), the number of entries in a state dict, instead of the "
        "number of checkpoints.",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I walk over the first (oldest) checkpoint's names and keep its step counter.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_float_step_counter,
        "mistake",
        "I averaged every entry in float64, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "sum_into_first_checkpoint",
        avg_in_place_into_first,
        "mistake",
        "I added the others into the first checkpoint's tensors with += and divided in place.",
    ),
    BlindCase(
        CHECK,
        "single_checkpoint_returned",
        avg_single_returned,
        "mistake",
        "With one checkpoint there is nothing to average, so I return it as it is.",
    ),
    BlindCase(
        CHECK,
        "result_in_float64",
        avg_keeps_float64,
        "mistake",
        "I averaged in float64 and forgot to turn the result back into the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept",
        avg_equal_kept_as_is,
        "mistake",
        "Like the translator's code I keep a tensor that is equal in every checkpoint, and "
        "the step counter, as the input's own tensor.",
    ),
    BlindCase(
        CHECK,
        "oldest_left_out",
        avg_skips_oldest,
        "mistake",
        "My loop runs over range(1, K), so the oldest checkpoint is left out of the sum (but "
        "I still divide by K).",
    ),
    BlindCase(
        CHECK,
        "running_pairwise_mean",
        avg_running_pairs,
        "mistake",
        "I keep a running value and average it with each next checkpoint, (m + x) / 2, which "
        "weighs the newest checkpoints more.",
    ),
    BlindCase(
        CHECK,
        "mean_without_dim",
        avg_mean_without_dim,
        "mistake",
        "torch.stack(...).mean() without dim=0, which gives one number for the whole tensor.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_add_",
        avg_accumulate_aliased,
        "mistake",
        "I deep-copied the first checkpoint and added the others in place with add_, going "
        "over every name, so a tied weight is added twice.",
    ),
    BlindCase(
        CHECK,
        "float32_accumulator",
        avg_float32_accumulator,
        "mistake",
        "I summed with .float() and never cast back, so a half-precision entry comes back as "
        "float32.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_tied_name_dropped,
        "mistake",
        "I skip a tensor I have already averaged (same data_ptr), so the second name of the "
        "tied embedding is missing.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_float64",
        avg_stack_mean,
        "correct",
        "torch.stack of float64 copies and mean(dim=0), cast back; integers cloned.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_copy_into",
        avg_deepcopy_copy_into,
        "correct",
        "A deep copy of the newest checkpoint; each mean (a float64 sum via reduce) written "
        "into it with copy_.",
    ),
    BlindCase(
        CHECK,
        "incremental_mean",
        avg_incremental_mean,
        "correct",
        "A running mean m + (x - m) / (i + 1) in float64, then cast back.",
    ),
]
