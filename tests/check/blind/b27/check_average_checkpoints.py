"""Blind set B27, check_average_checkpoints (chapter 16): checkpoint averaging as readers
write it."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_first_counted_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    averaged = {name: t.clone() for name, t in state_dicts[0].items()}  # start from the first
    for sd in state_dicts:
        for name, t in sd.items():
            if t.is_floating_point():
                averaged[name] += t
    for name, t in averaged.items():
        if t.is_floating_point():
            averaged[name] = t / len(state_dicts)
        else:
            averaged[name] = state_dicts[-1][name].clone()
    return averaged


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        total = torch.zeros_like(t)
        for i in range(1, len(state_dicts)):
            total += state_dicts[i][name]
        out[name] = total / len(state_dicts)
    return out


def avg_averages_counter(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([sd[name] for sd in state_dicts]).double()
        out[name] = stacked.mean(0).to(state_dicts[-1][name].dtype)  # every entry the same way
    return out


def avg_counter_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()  # the step counter as it was in the first checkpoint
    return out


def avg_accumulates_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    result = state_dicts[0]
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                result[name] += t
            else:
                result[name] = t
    for name, t in result.items():
        if t.is_floating_point():
            result[name] = t / len(state_dicts)
    return {name: t.clone() for name, t in result.items()}


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_deepcopy_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[-1])  # new tensors, nothing shared with the inputs
    for sd in state_dicts[:-1]:
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] += t
    for name, t in out.items():
        if t.is_floating_point():
            t /= len(state_dicts)
    return out


def avg_dedup_by_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    seen = set()
    out = {}
    for name, t in newest.items():
        if t.data_ptr() in seen:  # a tied weight: already averaged under its first name
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_counter_shared(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        else:
            out[name] = t  # the counter is not averaged, so I keep the newest one
    return out


def avg_keeps_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        same = all(torch.equal(sd[name], t) for sd in state_dicts)
        if not t.is_floating_point() or same:
            out[name] = t.clone() if not t.is_floating_point() else t  # nothing to average
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
    return out


def avg_indentation_slip(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    for sd in state_dicts:
        out = {}
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] = out.get(name, torch.zeros_like(t)) + t
            else:
                out[name] = t.clone()
    return {name: t / K if t.is_floating_point() else t for name, t in out.items()}


def avg_mean_without_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.mean(torch.stack([sd[name] for sd in state_dicts]))
        else:
            out[name] = t.clone()
    return out


def avg_floor_division(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts) // K
        else:
            out[name] = t.clone()
    return out


def avg_divides_inputs(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    for sd in state_dicts:
        for name, t in sd.items():
            if t.is_floating_point():
                t.div_(K)  # each checkpoint's share of the mean
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts)
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack in float64, mean over dim 0, back to the entry's dtype."""
    newest = state_dicts[-1]
    result: dict[str, Tensor] = {}
    for key, value in newest.items():
        if torch.is_floating_point(value):
            stacked = torch.stack([sd[key].to(torch.float64) for sd in state_dicts], dim=0)
            result[key] = stacked.mean(dim=0).to(value.dtype)
        else:
            result[key] = value.detach().clone()
    return result


def avg_running_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A running mean, m += (x - m) / (i + 1), in float64 on fresh tensors."""
    names = list(state_dicts[-1].keys())
    means = {n: None for n in names}
    for i, sd in enumerate(state_dicts):
        for n in names:
            x = sd[n]
            if not x.is_floating_point():
                continue
            if means[n] is None:
                means[n] = x.to(dtype=torch.float64, copy=True)
            else:
                means[n] += (x.double() - means[n]) / (i + 1)
    out = {}
    for n in names:
        last = state_dicts[-1][n]
        out[n] = means[n].to(last.dtype) if last.is_floating_point() else last.clone()
    return out


def avg_native_dtype(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """The mean taken in each entry's own dtype; the counter copied with torch.clone."""
    k = len(state_dicts)
    return {
        name: (
            torch.stack([s[name] for s in state_dicts]).sum(0) / k
            if tensor.dtype.is_floating_point
            else torch.clone(tensor)
        )
        for name, tensor in state_dicts[-1].items()
    }


def avg_keeps_tie(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Names that share one tensor in the newest checkpoint share one new mean tensor."""
    newest = state_dicts[-1]
    by_storage: dict[tuple, Tensor] = {}
    out = {}
    for name, t in newest.items():
        key = (t.data_ptr(), t.shape, t.stride(), t.dtype)
        if key in by_storage:
            out[name] = by_storage[key]
            continue
        if t.is_floating_point():
            acc = torch.zeros(t.shape, dtype=torch.float64, device=t.device)
            for sd in state_dicts:
                acc.add_(sd[name].double())
            new = (acc / len(state_dicts)).to(t.dtype)
        else:
            new = t.clone()
        by_storage[key] = new
        out[name] = new
    return out


CASES = [
    BlindCase(
        CHECK,
        "first_counted_twice",
        avg_first_counted_twice,
        "mistake",
        "I start from a copy of the first checkpoint and then add every checkpoint, the first "
        "one included, before dividing by K.",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_skips_oldest,
        "mistake",
        "My loop runs over range(1, len(state_dicts)), so the oldest checkpoint is left out, "
        "but I still divide by K.",
    ),
    BlindCase(
        CHECK,
        "averages_counter",
        avg_averages_counter,
        "mistake",
        "I average every entry the same way, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "counter_from_oldest",
        avg_counter_from_oldest,
        "mistake",
        "I keep the step counter of the first (oldest) checkpoint instead of the newest.",
    ),
    BlindCase(
        CHECK,
        "accumulates_into_first",
        avg_accumulates_into_first,
        "mistake",
        "I add the other checkpoints into the first one's tensors with +=, which changes the "
        "caller's checkpoint.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I sum in float64 for accuracy and forget to convert back to each entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_in_place",
        avg_deepcopy_in_place,
        "mistake",
        "I deepcopy the newest checkpoint and add the others into it with += and /=; the "
        "deepcopy keeps the tied weights as one tensor, so they are added and divided twice.",
    ),
    BlindCase(
        CHECK,
        "dedup_by_storage",
        avg_dedup_by_storage,
        "mistake",
        "I skip a name whose tensor I have already seen (same data_ptr), so the tied name is "
        "missing from the result.",
    ),
    BlindCase(
        CHECK,
        "counter_shared",
        avg_counter_shared,
        "mistake",
        "I keep the newest step counter as it is, the same tensor object as in the input.",
    ),
    BlindCase(
        CHECK,
        "keeps_equal_tensors",
        avg_keeps_equal_tensors,
        "mistake",
        "A tensor that is equal in every checkpoint (a buffer, or everything when K = 1) I keep "
        "as it is, like the translate command does.",
    ),
    BlindCase(
        CHECK,
        "indentation_slip",
        avg_indentation_slip,
        "mistake",
        "The dictionary is rebuilt inside the loop over checkpoints, so only the last one is left.",
    ),
    BlindCase(
        CHECK,
        "mean_without_dim",
        avg_mean_without_dim,
        "mistake",
        "I wrote torch.mean(torch.stack(...)) without dim=0, which gives one number per entry.",
    ),
    BlindCase(
        CHECK,
        "floor_division",
        avg_floor_division,
        "mistake",
        "I divided the sum by K with //.",
    ),
    BlindCase(
        CHECK,
        "divides_inputs",
        avg_divides_inputs,
        "mistake",
        "I divide each checkpoint by K in place with div_ and then add them up.",
    ),
    BlindCase(
        CHECK,
        "stack_float64",
        avg_stack_float64,
        "correct",
        "torch.stack in float64 and mean(dim=0), back to the entry's dtype; the counter cloned.",
    ),
    BlindCase(
        CHECK,
        "running_mean",
        avg_running_mean,
        "correct",
        "A running mean m += (x - m) / (i + 1) in float64 on fresh tensors.",
    ),
    BlindCase(
        CHECK,
        "native_dtype",
        avg_native_dtype,
        "correct",
        "A dict comprehension: stack, sum(0) / K in the entry's own dtype; torch.clone for the "
        "counter.",
    ),
    BlindCase(
        CHECK,
        "keeps_tie",
        avg_keeps_tie,
        "correct",
        "Names that share one tensor in the newest checkpoint get one new mean tensor, so the "
        "tie is kept in the result.",
    ),
]
