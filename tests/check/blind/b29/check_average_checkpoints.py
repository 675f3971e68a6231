"""Blind set B29, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy
import functools

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_no_division(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_newest_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    # the newest checkpoint already holds the best weights
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_divide_k_minus_one(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts) - 1  # the newest plus K older ones
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = torch.zeros_like(t, dtype=torch.float64)
            for sd in state_dicts:
                total += sd[name]
            out[name] = (total / max(K, 1)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_skip_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    recent = state_dicts[1:] or state_dicts  # "the last K": the first one is the start point
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in recent) / len(recent)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_everything(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        mean = torch.stack([sd[name].double() for sd in state_dicts]).mean(dim=0)
        out[name] = mean.to(t.dtype)  # integers too: the step counter becomes the mean step
    return out


def avg_accumulate_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = state_dicts[0][name]
            for sd in state_dicts[1:]:
                total += sd[name]
            out[name] = total / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_shallow_copy_add(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = dict(state_dicts[0])
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                avg[name] += t
    for name, t in avg.items():
        if t.is_floating_point():
            avg[name] = t / len(state_dicts)
        else:
            avg[name] = state_dicts[-1][name].clone()
    return avg


def avg_dedupe_by_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:
            continue  # a tied weight: averaged already
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = t.clone()
    return out


def avg_keep_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if not t.is_floating_point() or all(torch.equal(sd[name], t) for sd in state_dicts):
            out[name] = t  # nothing to average
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = t.clone()  # state_dicts[0]: the first in the list
    return out


def avg_mean_without_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean().to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_floats_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {
        name: (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(t.dtype)
        for name, t in state_dicts[-1].items()
        if t.is_floating_point()  # the integer buffers are not weights
    }


def avg_integer_shared(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = t  # kept as the newest checkpoint has it
    return out


def avg_always_float32(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = sum(sd[name].double() for sd in state_dicts)
            out[name] = (total / len(state_dicts)).float()  # back from float64 to float
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack in float64, .mean(0), back to each tensor's dtype."""
    averaged = {}
    for name, latest in state_dicts[-1].items():
        if torch.is_floating_point(latest):
            stacked = torch.stack([sd[name].to(torch.float64) for sd in state_dicts])
            averaged[name] = stacked.mean(dim=0).to(latest.dtype)
        else:
            averaged[name] = latest.detach().clone()
    return averaged


def avg_running_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A running mean, avg += (x - avg) / n, in a float64 accumulator of its own."""
    result = {}
    for name, latest in state_dicts[-1].items():
        if not latest.dtype.is_floating_point:
            result[name] = latest.clone()
            continue
        avg = torch.zeros(latest.shape, dtype=torch.float64)
        for n, sd in enumerate(state_dicts, start=1):
            avg.add_((sd[name].double() - avg) / n)
        result[name] = avg.to(latest.dtype)
    return result


def avg_native_dtype(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Mean in each tensor's own precision (float32 at least) with functools.reduce."""
    k = len(state_dicts)
    newest = state_dicts[-1]
    out = {}
    for name in newest:
        t = newest[name]
        if t.is_floating_point():
            work = torch.promote_types(t.dtype, torch.float32)
            total = functools.reduce(torch.add, (sd[name].to(work) for sd in state_dicts))
            out[name] = torch.div(total, k).to(t.dtype)
        else:
            out[name] = torch.clone(t)
    return out


def avg_deepcopy_then_fill(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A deep copy of the newest checkpoint, whose float entries are then overwritten in place
    (the copy's own tensors, never an input's)."""
    result = copy.deepcopy(state_dicts[-1])
    done = set()
    for name, t in result.items():
        if not t.is_floating_point() or id(t) in done:
            continue
        done.add(id(t))
        mean = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        t.copy_(mean)
    return result


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_no_division,
        "mistake",
        "I summed the checkpoints in float64 and forgot to divide by K.",
    ),
    BlindCase(
        CHECK,
        "newest_only",
        avg_newest_only,
        "mistake",
        "I returned a copy of the newest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "divide_by_k_minus_one",
        avg_divide_k_minus_one,
        "mistake",
        "I divided the sum by K - 1, counting the older checkpoints beside the newest.",
    ),
    BlindCase(
        CHECK,
        "oldest_left_out",
        avg_skip_oldest,
        "mistake",
        "I averaged state_dicts[1:], leaving the oldest one out.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_everything,
        "mistake",
        "I averaged every entry, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "sum_into_first_checkpoint",
        avg_accumulate_into_first,
        "mistake",
        "I accumulated with += into the first checkpoint's tensors.",
    ),
    BlindCase(
        CHECK,
        "float64_returned",
        avg_float64_result,
        "mistake",
        "I summed in float64 and forgot to turn the mean back into the tensor's dtype.",
    ),
    BlindCase(
        CHECK,
        "shallow_copy_in_place",
        avg_shallow_copy_add,
        "mistake",
        "I started from dict(state_dicts[0]) and added the others with +=, a shallow copy: the "
        "first checkpoint changes and tied names are added twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedupe_by_storage,
        "mistake",
        "I skipped tensors whose storage I had already seen, so one of the tied names is missing.",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept",
        avg_keep_equal_tensors,
        "mistake",
        "Like the translate command, I keep a tensor that is equal in every checkpoint (and "
        "integers) as it is, the input's own tensor.",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I looped over state_dicts[0], so the step counter is the oldest checkpoint's.",
    ),
    BlindCase(
        CHECK,
        "mean_without_dim",
        avg_mean_without_dim,
        "mistake",
        "I wrote torch.stack(...).mean() without dim=0, one number per entry.",
    ),
    BlindCase(
        CHECK,
        "integers_dropped",
        avg_floats_only,
        "mistake",
        "My dict comprehension keeps only the floating-point entries.",
    ),
    BlindCase(
        CHECK,
        "integer_not_copied",
        avg_integer_shared,
        "mistake",
        "I kept the newest step counter without .clone(), the input's own tensor.",
    ),
    BlindCase(
        CHECK,
        "always_float32",
        avg_always_float32,
        "mistake",
        "I turned the float64 mean back with .float(), so a half-precision entry comes back as "
        "float32.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_float64",
        avg_stack_mean,
        "correct",
        "torch.stack of float64 copies and .mean(dim=0), then .to(dtype); integers cloned.",
    ),
    BlindCase(
        CHECK,
        "running_mean",
        avg_running_mean,
        "correct",
        "A running mean avg += (x - avg) / n in a float64 accumulator of my own.",
    ),
    BlindCase(
        CHECK,
        "native_precision_reduce",
        avg_native_dtype,
        "correct",
        "functools.reduce(torch.add) in the tensor's own precision (float32 at least), then "
        "divided by K.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_fill",
        avg_deepcopy_then_fill,
        "correct",
        "copy.deepcopy of the newest checkpoint, whose float tensors I overwrite with copy_; "
        "tied names share the copied tensor, filled once.",
    ),
]
