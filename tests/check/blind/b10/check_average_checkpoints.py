"""Blind set B10, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy
from collections import OrderedDict

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts).to(tensor.dtype)  # no / K
        else:
            out[name] = tensor.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    # the loop variable is overwritten each time, so only the last checkpoint survives
    for sd in state_dicts:
        averaged = {name: t.clone() for name, t in sd.items()}
    return averaged


def avg_divide_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts) - 1  # "the index of the last checkpoint"
    K = max(K, 1)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = torch.zeros_like(tensor, dtype=torch.float64)
            for sd in state_dicts:
                total += sd[name]
            out[name] = (total / K).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    recent = state_dicts[1:] or state_dicts  # off by one: the oldest checkpoint is left out
    out = {}
    for name, tensor in recent[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name].double() for s in recent]).mean(0).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_step_counter_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([s[name].double() for s in state_dicts])
        out[name] = stacked.mean(dim=0).to(state_dicts[-1][name].dtype)  # integers too
    return out


def avg_accumulates_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    averaged = state_dicts[0]  # no copy: the first checkpoint's tensors are the accumulators
    for sd in state_dicts[1:]:
        for name, tensor in sd.items():
            if tensor.is_floating_point():
                averaged[name] += tensor
    for name, tensor in averaged.items():
        if tensor.is_floating_point():
            tensor /= len(state_dicts)
    averaged.update({n: t.clone() for n, t in state_dicts[-1].items() if not t.is_floating_point()})
    return averaged


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)  # no cast
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_inplace(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    averaged = copy.deepcopy(state_dicts[0])  # deepcopy keeps the tied pair as ONE tensor
    for sd in state_dicts[1:]:
        for name, tensor in sd.items():
            if tensor.is_floating_point():
                averaged[name].add_(tensor)  # the shared tensor gets every addition twice
    for name, tensor in averaged.items():
        if tensor.is_floating_point():
            tensor.div_(len(state_dicts))
        else:
            averaged[name] = state_dicts[-1][name].clone()
    return averaged


def avg_unique_tensors_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    seen, out = set(), {}
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:  # "the tied weight was already averaged"
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            mean = sum(s[name].double() for s in state_dicts) / len(state_dicts)
            out[name] = mean.to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_integer_kept_as_is(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) / len(state_dicts)).to(
                tensor.dtype
            )
        else:
            out[name] = tensor  # the newest checkpoint's counter, not copied
    return out


def avg_equal_tensors_kept(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if not tensor.is_floating_point() or all(torch.equal(s[name], tensor) for s in state_dicts):
            out[name] = tensor  # as translator/checkpoint.py: an unchanged tensor kept as it is
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
    return out


def avg_counter_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():  # names and integers from the oldest
        if tensor.is_floating_point():
            mean = torch.stack([s[name].double() for s in state_dicts]).mean(0)
            out[name] = mean.to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_floats_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():  # integers "are not weights", so I left them out
            mean = torch.stack([s[name].double() for s in state_dicts]).mean(0)
            out[name] = mean.to(tensor.dtype)
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack in float64 and .mean(0); the integer entries cloned from the newest."""
    newest = state_dicts[-1]
    result = OrderedDict()
    for key in newest:
        ref = newest[key]
        if torch.is_floating_point(ref):
            stacked = torch.stack([sd[key].to(torch.float64) for sd in state_dicts], dim=0)
            result[key] = stacked.mean(dim=0).to(dtype=ref.dtype)
        else:
            result[key] = ref.detach().clone()
    return result


def avg_running_sum(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A float64 copy of the first checkpoint as accumulator, add_ and div_ in place on that
    copy (never on an input), cast back at the end; names sorted."""
    K = len(state_dicts)
    newest = state_dicts[-1]
    acc = {n: state_dicts[0][n].to(torch.float64, copy=True) for n in sorted(newest)}
    for sd in state_dicts[1:]:
        for n in acc:
            acc[n].add_(sd[n].to(torch.float64))
    out = {}
    for n, total in acc.items():
        if newest[n].is_floating_point():
            out[n] = total.div_(K).to(newest[n].dtype)
        else:
            out[n] = newest[n].clone()
    return out


def avg_tied_computed_once(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A tied pair is averaged once and both names get the same new tensor, so the result is
    tied too; weights given as a running mean m += (x - m) / (i + 1) in float64."""
    newest = state_dicts[-1]
    done: dict[tuple, Tensor] = {}
    out = {}
    for name, tensor in newest.items():
        if not tensor.is_floating_point():
            out[name] = tensor.clone()
            continue
        key = (tensor.data_ptr(), tensor.shape, tensor.dtype)
        if key not in done:
            mean = torch.zeros(tensor.shape, dtype=torch.float64)
            for i, sd in enumerate(state_dicts):
                mean += (sd[name].double() - mean) / (i + 1)
            done[key] = mean.to(tensor.dtype)
        out[name] = done[key]
    return out


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
        "last_checkpoint_only",
        avg_last_only,
        "mistake",
        "My loop rebuilt the dictionary from each checkpoint in turn, so only the last one is "
        "returned.",
    ),
    BlindCase(
        CHECK,
        "divide_by_k_minus_1",
        avg_divide_by_k_minus_1,
        "mistake",
        "I divided the sum by len(state_dicts) - 1.",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_skips_oldest,
        "mistake",
        "Off by one: I averaged state_dicts[1:], leaving the oldest checkpoint out.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_counter_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too (it becomes the rounded mean of "
        "the steps).",
    ),
    BlindCase(
        CHECK,
        "accumulates_into_first",
        avg_accumulates_into_first,
        "mistake",
        "I added the other checkpoints into the first one's tensors with += and divided in "
        "place, so the caller's first checkpoint is changed.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I summed in float64 and returned that, without casting back to the weight's dtype.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_inplace,
        "mistake",
        "I deep-copied the first checkpoint and add_-ed the others into it by name; the copy "
        "keeps the tied weights as one tensor, so it receives every addition twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_unique_tensors_only,
        "mistake",
        "I skipped tensors whose data_ptr I had already seen, so the second name of the tied "
        "weight is missing from the result.",
    ),
    BlindCase(
        CHECK,
        "integer_not_copied",
        avg_integer_kept_as_is,
        "mistake",
        "I put the newest checkpoint's step counter into the result as it is, without .clone().",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept",
        avg_equal_tensors_kept,
        "mistake",
        "I followed translator/checkpoint.py: a tensor equal in every checkpoint (a buffer, or "
        "everything when K = 1) is returned as it is, shared with the input.",
    ),
    BlindCase(
        CHECK,
        "counter_from_oldest",
        avg_counter_from_oldest,
        "mistake",
        "I took the names and the integer step counter from the first (oldest) checkpoint.",
    ),
    BlindCase(
        CHECK,
        "floats_only",
        avg_floats_only,
        "mistake",
        "I returned only the floating-point entries and dropped the integer step counter.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack in float64 and mean(dim=0), cast back; an OrderedDict; integers cloned.",
    ),
    BlindCase(
        CHECK,
        "running_sum_own_copy",
        avg_running_sum,
        "correct",
        "A float64 copy of the first checkpoint is the accumulator (add_ and div_ in place on "
        "that copy only); names in sorted order.",
    ),
    BlindCase(
        CHECK,
        "tied_computed_once",
        avg_tied_computed_once,
        "correct",
        "Averages a tied pair once and gives both names the same new tensor (the result stays "
        "tied); an incremental running mean in float64.",
    ),
]
