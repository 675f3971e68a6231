"""Blind set B17, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy
import functools

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts)  # forgot / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_newest_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}  # the last is the best


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    K = len(state_dicts)
    out = {}
    for name, t in newest.items():
        if t.is_floating_point():
            total = torch.zeros_like(t)
            for i in range(1, K):  # range(1, K): the first checkpoint left out
                total = total + state_dicts[i][name]
            out[name] = total / K
        else:
            out[name] = t.clone()
    return out


def avg_divides_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    K = max(len(state_dicts) - 1, 1)  # "K older ones plus the newest"
    return {
        name: (sum(s[name] for s in state_dicts) / K if t.is_floating_point() else t.clone())
        for name, t in newest.items()
    }


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([s[name].double() for s in state_dicts])
        out[name] = stacked.mean(dim=0).to(state_dicts[-1][name].dtype)  # every entry alike
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        acc = state_dicts[0][name]  # accumulate into the first checkpoint's tensor
        for s in state_dicts[1:]:
            acc += s[name]
        acc /= len(state_dicts)
        out[name] = acc
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # new tensors, so the inputs stay as they are
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] += t
    for name, t in out.items():
        if t.is_floating_point():
            t /= len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_dedup_by_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # a tied tensor: already averaged, skip it
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_keeps_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if not t.is_floating_point() or all(torch.equal(s[name], t) for s in state_dicts):
            out[name] = t  # nothing to average, as translator/checkpoint.py does
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
    return out


def avg_running_pairs(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.clone() for name, t in state_dicts[0].items()}
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] = (out[name] + t) / 2  # running mean of the previous mean and the next
            else:
                out[name] = t.clone()
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():  # the oldest checkpoint's names and integers
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
            out[name] = out[name].to(t.dtype)
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) in the entry's own dtype; integers copied from the newest."""
    newest = state_dicts[-1]
    return {
        name: torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        if t.is_floating_point()
        else t.detach().clone()
        for name, t in newest.items()
    }


def avg_reduce_in_float64(
    state_dicts: list[dict[str, Tensor]], weights: list[float] | None = None
) -> dict[str, Tensor]:
    """functools.reduce over float64 copies; an optional weights argument (default: equal)."""
    K = len(state_dicts)
    weights = [1.0 / K] * K if weights is None else weights
    result = {}
    for name, t in state_dicts[-1].items():
        if torch.is_floating_point(t):
            terms = [w * s[name].to(torch.float64) for w, s in zip(weights, state_dicts)]
            result[name] = functools.reduce(torch.add, terms).to(dtype=t.dtype)
        else:
            result[name] = t.clone()
    return result


def avg_inplace_on_own_copy(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Accumulates in place into its own zero tensors (one per name), then divides in place."""
    averaged = {}
    for name, t in state_dicts[-1].items():
        if t.dtype.is_floating_point:
            acc = torch.zeros(t.shape, dtype=torch.float64)
            for s in state_dicts:
                acc.add_(s[name])
            acc.div_(len(state_dicts))
            averaged[name] = acc.to(t.dtype)
        else:
            averaged[name] = torch.empty_like(t).copy_(t)
    return averaged


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_not_divided,
        "mistake",
        "I summed the checkpoints and forgot to divide by K.",
    ),
    BlindCase(
        CHECK,
        "newest_only",
        avg_newest_only,
        "mistake",
        "I returned a copy of the newest checkpoint, without averaging.",
    ),
    BlindCase(
        CHECK,
        "range_skips_oldest",
        avg_skips_oldest,
        "mistake",
        "My loop ran over range(1, K), leaving out the oldest checkpoint, and divided by K.",
    ),
    BlindCase(
        CHECK,
        "divide_by_k_minus_1",
        avg_divides_by_k_minus_1,
        "mistake",
        "I divided the sum by K - 1.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too (cast back to its dtype).",
    ),
    BlindCase(
        CHECK,
        "accumulate_into_input",
        avg_in_place,
        "mistake",
        "I accumulated with += into the first checkpoint's tensors and returned them, so the "
        "input is changed.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I summed in float64 for precision but never turned the mean back into float32.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_accumulate,
        "mistake",
        "I deep-copied the first state dict and added the others in place; the tied embedding "
        "and output weight stay one tensor in the copy, so it gets everything twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedup_by_storage,
        "mistake",
        "I skipped a tensor whose storage I had already averaged (the tied weight), so the "
        "second tied name is missing from the result.",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_shared",
        avg_keeps_equal_tensors,
        "mistake",
        "Like translator/checkpoint.py I kept a tensor that is the same in every checkpoint "
        "(and the integers) as the input's tensor, without copying.",
    ),
    BlindCase(
        CHECK,
        "running_pairwise_mean",
        avg_running_pairs,
        "mistake",
        "I kept a running mean: mean = (mean + next) / 2 for each further checkpoint.",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I took the integer step counter from the oldest checkpoint instead of the newest.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) in the entry's own dtype instead of a float64 sum.",
    ),
    BlindCase(
        CHECK,
        "reduce_weighted_float64",
        avg_reduce_in_float64,
        "correct",
        "functools.reduce over weighted float64 terms; an optional weights argument defaulting "
        "to equal weights.",
    ),
    BlindCase(
        CHECK,
        "inplace_on_own_zeros",
        avg_inplace_on_own_copy,
        "correct",
        "add_ and div_ in place, but into its own float64 zeros; integers copied with "
        "empty_like().copy_().",
    ),
]
