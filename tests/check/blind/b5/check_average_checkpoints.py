"""Blind set B5, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_pairwise_running(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    averaged = {name: t.clone() for name, t in state_dicts[0].items()}
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                averaged[name] = (averaged[name] + t) / 2  # "running mean" of two at a time
            else:
                averaged[name] = t.clone()
    return averaged


def avg_oldest_step_counter(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        else:
            out[name] = state_dicts[0][name].clone()  # the integer buffer of the first file
    return out


def avg_float32_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.dtype == torch.float32:  # other float dtypes fall through to "keep the newest"
            out[name] = sum(sd[name] for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_cast_to_float32(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            # everything ends up float32, whatever its dtype was
            out[name] = torch.stack([sd[name].float() for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_stack_wrong_axis(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            stacked = torch.stack([sd[name] for sd in state_dicts], dim=-1)  # (..., K)
            out[name] = stacked.mean(dim=0)  # averaged over the first axis, not over K
        else:
            out[name] = t.clone()
    return out


def avg_deepcopy_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    result = copy.deepcopy(state_dicts[-1])  # deepcopy keeps the tied tensors tied
    for name, t in result.items():
        if t.is_floating_point():
            for sd in state_dicts[:-1]:
                t += sd[name]
    for name, t in result.items():
        if t.is_floating_point():
            t /= len(state_dicts)
    return result


def avg_integer_floor_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name in state_dicts[-1]:
        total = sum(sd[name] for sd in state_dicts)
        # one rule for everything; // keeps integers integers
        out[name] = total / K if total.is_floating_point() else total // K
    return out


def avg_varargs(*state_dicts: dict[str, Tensor]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
            out[name] = out[name].to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_first_keys_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    seen: set[int] = set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # skip a tensor already averaged under another name
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts).div(len(state_dicts))
            out[name] = out[name].to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_newest_weighted(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    weights = [i + 1 for i in range(K)]  # newer checkpoints count more
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(w * sd[name] for w, sd in zip(weights, state_dicts)) / sum(weights)
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Stacked in float64, mean over the new first axis, cast back."""
    out: dict[str, Tensor] = {}
    for name, newest in state_dicts[-1].items():
        if torch.is_floating_point(newest):
            stacked = torch.stack([sd[name].to(torch.float64) for sd in state_dicts])
            out[name] = stacked.mean(dim=0).to(newest.dtype)
        else:
            out[name] = newest.detach().clone()
    return out


def avg_accumulate_on_copy(
    state_dicts: list[dict[str, Tensor]], keep_newest_integers: bool = True
) -> dict[str, Tensor]:
    """An accumulator cloned in float64 per name, updated in place with add_ and div_."""
    K = len(state_dicts)
    out: dict[str, Tensor] = {}
    for name in state_dicts[-1].keys():
        newest = state_dicts[-1][name]
        if not newest.is_floating_point():
            source = newest if keep_newest_integers else state_dicts[0][name]
            out[name] = source.clone()
            continue
        acc = state_dicts[0][name].to(torch.float64, copy=True)
        for sd in state_dicts[1:]:
            acc.add_(sd[name].to(torch.float64))
        acc.div_(K)
        out[name] = acc.to(newest.dtype)
    return out


CASES = [
    BlindCase(
        CHECK,
        "pairwise_running_mean",
        avg_pairwise_running,
        "mistake",
        "I averaged two at a time, (avg + next) / 2, so for K = 3 the newest checkpoint "
        "weighs 1/2 and the two older ones 1/4.",
    ),
    BlindCase(
        CHECK,
        "oldest_step_counter",
        avg_oldest_step_counter,
        "mistake",
        "For the integer step counter I kept the first (oldest) checkpoint's value, not "
        "the newest's.",
    ),
    BlindCase(
        CHECK,
        "only_float32_averaged",
        avg_float32_only,
        "mistake",
        "I averaged only tensors whose dtype is float32; half or double weights are kept "
        "from the newest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "everything_float32",
        avg_cast_to_float32,
        "mistake",
        "I converted every floating-point entry to float32 before the mean and never "
        "converted back to its own dtype.",
    ),
    BlindCase(
        CHECK,
        "stack_last_mean_first",
        avg_stack_wrong_axis,
        "mistake",
        "I stacked the checkpoints on the last axis but took the mean over axis 0.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_in_place",
        avg_deepcopy_in_place,
        "mistake",
        "I deep-copied the newest state dict and summed into it in place; the copy keeps "
        "tied names on one tensor, which is then added to and divided twice.",
    ),
    BlindCase(
        CHECK,
        "integer_floor_mean",
        avg_integer_floor_mean,
        "mistake",
        "One rule for every entry: the sum over the checkpoints divided by K, with // for "
        "integers, so the step counter becomes the floor of its mean.",
    ),
    BlindCase(
        CHECK,
        "varargs_signature",
        avg_varargs,
        "mistake",
        "I wrote the function as f(*state_dicts), so the list passed in arrives as a "
        "single argument.",
    ),
    BlindCase(
        CHECK,
        "tied_name_skipped",
        avg_first_keys_only,
        "mistake",
        "I skipped a name whose tensor has a data_ptr already averaged, so the second "
        "name of a tied weight is missing from the result.",
    ),
    BlindCase(
        CHECK,
        "newer_weighted_more",
        avg_newest_weighted,
        "mistake",
        "I weighted checkpoint i by i + 1 so that newer ones count more, instead of a plain mean.",
    ),
    BlindCase(
        CHECK,
        "stack_float64_mean",
        avg_stack_float64,
        "correct",
        "Each weight stacked in float64, mean over the stack axis, cast back to its dtype; "
        "integers cloned from the newest.",
    ),
    BlindCase(
        CHECK,
        "accumulate_on_copy",
        avg_accumulate_on_copy,
        "correct",
        "A float64 copy of the first checkpoint's tensor as accumulator, add_ and div_ in "
        "place on that copy; an optional flag with the right default.",
    ),
]
