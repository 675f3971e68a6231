"""Blind set B30, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy
import functools

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]  # the newest checkpoint is the best one anyway
    return {name: tensor.clone() for name, tensor in newest.items()}


def avg_first_counted_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.double().clone() for name, t in state_dicts[0].items()}
    for sd in state_dicts:  # should start at state_dicts[1:]
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] += t.double()
    result = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            result[name] = (out[name] / len(state_dicts)).to(t.dtype)
        else:
            result[name] = t.clone()
    return result


def avg_skip_newest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = torch.zeros_like(tensor, dtype=torch.float64)
            for i in range(K - 1):  # range end left out one too many
                total += state_dicts[i][name]
            out[name] = (total / K).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_everything_as_float(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([s[name].double() for s in state_dicts])
        out[name] = stacked.mean(0).float()  # the step counter becomes a float too
    return out


def avg_in_place_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = state_dicts[0]
    K = len(state_dicts)
    for name, tensor in avg.items():
        if tensor.is_floating_point():
            for sd in state_dicts[1:]:
                tensor += sd[name]
            tensor /= K
        else:
            avg[name] = state_dicts[-1][name].clone()
    return avg


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[0])  # a copy, so the inputs stay as they were
    for sd in state_dicts[1:]:
        for name, tensor in sd.items():
            if tensor.is_floating_point():
                avg[name] += tensor
    for name, tensor in avg.items():
        if tensor.is_floating_point():
            tensor /= len(state_dicts)
        else:
            avg[name] = state_dicts[-1][name].clone()
    return avg


def avg_dedup_by_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    newest = state_dicts[-1]
    for name, tensor in newest.items():
        if tensor.data_ptr() in seen:  # a tied weight: already averaged
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_counter_not_copied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) / len(state_dicts)).to(
                tensor.dtype
            )
        else:
            out[name] = tensor  # an integer: nothing to average
    return out


def avg_counter_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) / len(state_dicts)).to(
                tensor.dtype
            )
        else:
            out[name] = tensor.clone()  # from the first checkpoint in the list
    return out


def avg_keep_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        values = [s[name] for s in state_dicts]
        if not tensor.is_floating_point():
            out[name] = tensor.clone()
        elif all(torch.equal(values[0], v) for v in values[1:]):
            out[name] = tensor  # unchanged in every checkpoint (a buffer): nothing to average
        else:
            out[name] = (sum(v.double() for v in values) / len(values)).to(tensor.dtype)
    return out


def avg_floor_division(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) // len(state_dicts)).to(
                tensor.dtype
            )
        else:
            out[name] = tensor.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if torch.is_floating_point(tensor):
            stacked = torch.stack([sd[name].to(torch.float64) for sd in state_dicts])
            out[name] = stacked.mean(dim=0).to(tensor.dtype)
        else:
            out[name] = tensor.detach().clone()
    return out


def avg_running_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if not tensor.dtype.is_floating_point:
            out[name] = tensor.clone()
            continue
        mean = torch.zeros(tensor.shape, dtype=torch.float64)
        for i, sd in enumerate(state_dicts):
            mean += (sd[name].double() - mean) / (i + 1)  # incremental mean
        out[name] = mean.to(dtype=tensor.dtype, device=tensor.device)
    return out


def avg_reduce_accumulator(
    state_dicts: list[dict[str, Tensor]], dtype: torch.dtype = torch.float64
) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            acc = functools.reduce(
                lambda a, sd: a.add_(sd[name].to(dtype)),
                state_dicts,
                torch.zeros_like(tensor, dtype=dtype),
            )
            out[name] = acc.div_(K).to(tensor.dtype)
        else:
            out[name] = torch.empty_like(tensor).copy_(tensor)
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_not_divided,
        "mistake",
        "I summed the checkpoints and forgot to divide by K.",
    ),
    BlindCase(
        CHECK,
        "last_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "first_counted_twice",
        avg_first_counted_twice,
        "mistake",
        "I started the sum from the first checkpoint and then looped over all of them, the "
        "first included.",
    ),
    BlindCase(
        CHECK,
        "range_skips_newest",
        avg_skip_newest,
        "mistake",
        "I looped over range(K - 1), leaving out the newest checkpoint, and divided by K.",
    ),
    BlindCase(
        CHECK,
        "everything_as_float",
        avg_everything_as_float,
        "mistake",
        "I stacked and averaged every entry, the step counter included, and returned float32.",
    ),
    BlindCase(
        CHECK,
        "in_place_into_first",
        avg_in_place_first,
        "mistake",
        "I added the other checkpoints into the first one with += and /= and returned it.",
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
        "deepcopy_then_accumulate",
        avg_deepcopy_accumulate,
        "mistake",
        "I deep-copied the first checkpoint and added the others into it with +=, name by name.",
    ),
    BlindCase(
        CHECK,
        "dedup_by_data_ptr",
        avg_dedup_by_storage,
        "mistake",
        "I skipped a name whose tensor has the same data_ptr as one already done, to average "
        "tied weights once.",
    ),
    BlindCase(
        CHECK,
        "counter_not_copied",
        avg_counter_not_copied,
        "mistake",
        "I put the newest step counter into the result as it is, without .clone().",
    ),
    BlindCase(
        CHECK,
        "counter_from_oldest",
        avg_counter_from_oldest,
        "mistake",
        "I walked the names of state_dicts[0] and kept its step counter, the oldest one.",
    ),
    BlindCase(
        CHECK,
        "keeps_equal_tensors",
        avg_keep_equal_tensors,
        "mistake",
        "As the translator's code does, I kept a tensor that is the same in every checkpoint "
        "as it is, without copying it.",
    ),
    BlindCase(
        CHECK,
        "floor_division",
        avg_floor_division,
        "mistake",
        "I divided the sum with // instead of /.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack of the float64 copies and .mean(dim=0), cast back; integers cloned.",
    ),
    BlindCase(
        CHECK,
        "running_mean",
        avg_running_mean,
        "correct",
        "An incremental mean in float64, mean += (x - mean) / (i + 1), over the checkpoints.",
    ),
    BlindCase(
        CHECK,
        "reduce_accumulator",
        avg_reduce_accumulator,
        "correct",
        "functools.reduce adding in place into a fresh float64 accumulator, div_ by K; an "
        "extra dtype argument for the accumulator with a default.",
    ),
]
