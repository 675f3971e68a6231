"""Blind set B14, check_average_checkpoints (chapter 16): averaging the last K state dicts."""

from __future__ import annotations

import copy
from collections import OrderedDict

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts)  # forgot / K
        else:
            out[name] = t.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_divide_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = torch.zeros_like(t)
            for sd in state_dicts:
                total += sd[name]
            out[name] = total / max(K - 1, 1)  # K - 1 intervals between K checkpoints
        else:
            out[name] = t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {
        name: sum(sd[name] for sd in state_dicts) / len(state_dicts) for name in state_dicts[-1]
    }


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    seen = set()
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            acc = state_dicts[0][name]
            if id(acc) in seen:
                out[name] = acc
                continue
            seen.add(id(acc))
            for sd in state_dicts[1:]:
                acc += sd[name]  # accumulate into the first checkpoint
            acc /= len(state_dicts)
            out[name] = acc
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_deepcopy_tied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # a copy, so the input stays unchanged
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] += t
    done = set()
    for name, t in out.items():
        if t.is_floating_point() and id(t) not in done:
            t /= len(state_dicts)
            done.add(id(t))
        elif not t.is_floating_point():
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_dedup_drops_name(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    seen = set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # tied weight: already averaged, skip it
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_int_not_cloned(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t  # the step counter, as it is
    return out


def avg_equal_kept(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if all(torch.equal(sd[name], t) for sd in state_dicts):
            out[name] = t  # the same everywhere (a buffer): nothing to average
        elif t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_int_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()  # the first checkpoint's step
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) for floats, a clone of the newest for integers."""
    newest = state_dicts[-1]
    return {
        name: torch.stack([sd[name] for sd in state_dicts]).mean(0)
        if t.is_floating_point()
        else t.clone()
        for name, t in newest.items()
    }


def avg_running_sum(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A clone of the first, in-place += on the clone, then /= K; an OrderedDict."""
    out: dict[str, Tensor] = OrderedDict()
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.detach().clone()
            continue
        acc = state_dicts[0][name].detach().clone()
        for sd in state_dicts[1:]:
            acc += sd[name]
        acc /= len(state_dicts)
        out[name] = acc
    return out


def avg_zeros_add(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """zeros_like plus add_(alpha=1/K), the mean taken in float64 and cast back."""
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if t.dtype.is_floating_point:
            acc = torch.zeros_like(t, dtype=torch.float64)
            for sd in state_dicts:
                acc.add_(sd[name].to(torch.float64), alpha=1.0 / K)
            out[name] = acc.to(t.dtype)
        else:
            out[name] = torch.empty_like(t).copy_(t)
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_only,
        "mistake",
        "I summed the checkpoints and forgot to divide by K.",
    ),
    BlindCase(
        CHECK,
        "last_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint only.",
    ),
    BlindCase(CHECK, "divide_by_k_minus_1", avg_divide_k_minus_1, "mistake", "I divided by K - 1."),
    BlindCase(
        CHECK,
        "step_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "accumulate_in_first",
        avg_in_place,
        "mistake",
        "I accumulated into the first checkpoint's tensors with +=.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64,
        "mistake",
        "I summed in float64 for accuracy and forgot to cast back.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_twice",
        avg_deepcopy_tied,
        "mistake",
        "I deepcopied the first dict and added into it; the tied weight is one tensor.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedup_drops_name,
        "mistake",
        "I skipped tensors whose storage I had seen, dropping the tied name.",
    ),
    BlindCase(
        CHECK,
        "int_shared",
        avg_int_not_cloned,
        "mistake",
        "I kept the step counter as the same tensor, not a copy.",
    ),
    BlindCase(
        CHECK,
        "equal_entries_shared",
        avg_equal_kept,
        "mistake",
        "Entries equal in every checkpoint (buffers, K = 1) are returned as they are.",
    ),
    BlindCase(
        CHECK,
        "int_from_oldest",
        avg_int_from_oldest,
        "mistake",
        "The step counter is taken from the oldest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) for floats in their own dtype, clone for integers.",
    ),
    BlindCase(
        CHECK,
        "running_sum_in_place",
        avg_running_sum,
        "correct",
        "A clone of the oldest, += in place on that clone, then /= K.",
    ),
    BlindCase(
        CHECK,
        "zeros_add_alpha",
        avg_zeros_add,
        "correct",
        "zeros_like in float64, add_ with alpha=1/K, cast back; integers copied.",
    ),
]
