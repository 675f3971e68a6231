"""Blind set B32, check_average_checkpoints (chapter 16): the mean of the last K state dicts."""

from __future__ import annotations

import copy
from functools import reduce

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).sum(0)  # the mean ... sum
        else:
            out[name] = tensor.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}  # the newest is the best


def avg_divide_by_k_minus_one(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    k = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / max(k - 1, 1)).to(tensor.dtype)  # k - 1 intervals between them
        else:
            out[name] = tensor.clone()
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    k = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(state_dicts[i][name].double() for i in range(1, k))  # off by one
            out[name] = (total / k).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        total = sum(s[name].double() for s in state_dicts)
        out[name] = (total / len(state_dicts)).to(tensor.dtype)  # every entry the same way
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():  # names and integers from the first dict
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = state_dicts[0]
    for name, tensor in out.items():
        if tensor.is_floating_point():
            for s in state_dicts[1:]:
                tensor.add_(s[name])
            tensor.div_(len(state_dicts))
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # a copy, so the inputs stay as they are
    for s in state_dicts[1:]:
        for name, tensor in out.items():
            if tensor.is_floating_point():
                tensor += s[name]
    for name, tensor in out.items():
        if tensor.is_floating_point():
            tensor /= len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_tied_name_dropped(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:  # a tied weight: already averaged under its first name
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_integer_not_copied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor  # an integer is not averaged: keep it as it is
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


def avg_equal_kept_as_is(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """The translator's rule: a tensor equal in every checkpoint is kept (not a copy)."""
    out = {}
    for name, tensor in state_dicts[-1].items():
        if not tensor.is_floating_point() or all(torch.equal(s[name], tensor) for s in state_dicts):
            out[name] = tensor
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
    return out


def avg_hard_coded_three(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / 3).to(tensor.dtype)  # --average 3, as in the chapter
        else:
            out[name] = tensor.clone()
    return out


def avg_mean_everything(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    names = state_dicts[-1].keys()
    return {n: torch.stack([s[n] for s in state_dicts]).mean(dim=0) for n in names}


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if torch.is_floating_point(tensor):
            stacked = torch.stack([s[name].to(torch.float64) for s in state_dicts])
            out[name] = stacked.mean(dim=0).to(tensor.dtype)
        else:
            out[name] = tensor.detach().clone()
    return out


def avg_running_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """An incremental mean in float64: mean += (x - mean) / (i + 1)."""
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if not tensor.is_floating_point():
            out[name] = tensor.clone()
            continue
        mean = torch.zeros_like(tensor, dtype=torch.float64)
        for i, s in enumerate(state_dicts):
            mean += (s[name].double() - mean) / (i + 1)
        out[name] = mean.to(tensor.dtype)
    return out


def avg_reduce_add(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    k = len(state_dicts)

    def mean_of(name: str) -> Tensor:
        total = reduce(torch.add, (s[name].double() for s in state_dicts))
        return torch.div(total, k)

    return {
        name: (mean_of(name).to(t.dtype) if t.is_floating_point() else t.clone())
        for name, t in state_dicts[-1].items()
    }


def avg_float32_with_clone(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """The mean taken in each tensor's own dtype (float32 here), every result cloned."""
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0).clone()
        else:
            out[name] = tensor.clone()
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_not_divided,
        "mistake",
        "I stacked the weights and took .sum(0) instead of .mean(0).",
    ),
    BlindCase(
        CHECK,
        "last_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint, thinking it already the best.",
    ),
    BlindCase(
        CHECK,
        "divide_by_k_minus_one",
        avg_divide_by_k_minus_one,
        "mistake",
        "I divided the sum by K - 1 (and by 1 when K = 1).",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_skips_oldest,
        "mistake",
        "My loop ran over range(1, K), so the oldest checkpoint is left out of the sum, still "
        "divided by K.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too (then cast back to int).",
    ),
    BlindCase(
        CHECK,
        "names_and_step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I walked over the first (oldest) state dict, so the step counter is the oldest one's.",
    ),
    BlindCase(
        CHECK,
        "accumulated_in_place",
        avg_in_place,
        "mistake",
        "I added the others into the first checkpoint's tensors with add_ and div_, changing "
        "the input.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I summed in float64 and forgot to turn the mean back into the weight's dtype.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_accumulate,
        "mistake",
        "I deep-copied the first state dict and accumulated into it with +=; the tied "
        "embedding and output weight are one tensor in the copy, so it gets added and divided "
        "twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_tied_name_dropped,
        "mistake",
        "I skipped a tensor whose data_ptr I had seen, to average tied weights once; the "
        "second name is then missing.",
    ),
    BlindCase(
        CHECK,
        "integer_not_copied",
        avg_integer_not_copied,
        "mistake",
        "I returned the newest checkpoint's step counter tensor itself, not a copy.",
    ),
    BlindCase(
        CHECK,
        "single_returned_as_is",
        avg_single_returned_as_is,
        "mistake",
        "With K = 1 I returned dict(state_dicts[0]): a new dict, but the same tensors.",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept",
        avg_equal_kept_as_is,
        "mistake",
        "I copied the translator's rule: a tensor equal in every checkpoint (the buffer) and "
        "the integers are kept as they are, shared with the input.",
    ),
    BlindCase(
        CHECK,
        "divide_by_three",
        avg_hard_coded_three,
        "mistake",
        "I divided by 3, the chapter's --average 3, instead of len(state_dicts).",
    ),
    BlindCase(
        CHECK,
        "mean_of_every_entry",
        avg_mean_everything,
        "mistake",
        "torch.stack(...).mean(0) on every entry, the integer step counter too (mean of a long "
        "tensor).",
    ),
    BlindCase(
        CHECK,
        "stack_mean_float64",
        avg_stack_mean,
        "correct",
        "torch.stack of float64 copies, .mean(dim=0), back to the dtype; integers cloned.",
    ),
    BlindCase(
        CHECK,
        "running_mean",
        avg_running_mean,
        "correct",
        "An incremental mean in float64, mean += (x - mean) / (i + 1).",
    ),
    BlindCase(
        CHECK,
        "reduce_add",
        avg_reduce_add,
        "correct",
        "functools.reduce(torch.add, ...) in float64 over a dict comprehension.",
    ),
    BlindCase(
        CHECK,
        "float32_mean_cloned",
        avg_float32_with_clone,
        "correct",
        "The mean taken in the weights' own dtype with torch.stack(...).mean(0), no float64.",
    ),
]
