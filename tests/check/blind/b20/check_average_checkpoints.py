"""Blind set B20, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_no_division(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts).to(t.dtype)  # forgot / K
        else:
            out[name] = t.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    # "the newest is the best one anyway"
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_skips_newest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        acc = torch.zeros_like(t, dtype=torch.float64)
        for i in range(K - 1):  # off by one: the newest checkpoint never added
            acc += state_dicts[i][name].double()
        out[name] = (acc / K).to(t.dtype)
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([sd[name].double() for sd in state_dicts])
        out[name] = stacked.mean(0).to(state_dicts[-1][name].dtype)  # ints averaged as well
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if t.is_floating_point():
            for sd in state_dicts[:-1]:
                t.add_(sd[name])  # accumulated into the newest checkpoint's tensor
            out[name] = t.clone().div_(K)
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


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # deepcopy keeps tied names as one tensor
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] += t
    for name, t in out.items():
        if t.is_floating_point():
            t /= len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_dedup_by_pointer(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # a tied weight: already averaged under its first name
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = t.clone()
    return out


def avg_keeps_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
        elif all(torch.equal(sd[name], t) for sd in state_dicts):
            out[name] = t  # nothing to average: kept as it is
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).double().mean(0).to(t.dtype)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = state_dicts[0][name].clone()  # the step counter of the first one
    return out


def avg_mean_without_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            stacked = torch.stack([sd[name].double() for sd in state_dicts])
            out[name] = stacked.mean().expand_as(t).to(t.dtype).clone()  # mean of everything
        else:
            out[name] = t.clone()
    return out


def avg_running_halves(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        avg = state_dicts[0][name].double()
        for sd in state_dicts[1:]:
            avg = (avg + sd[name].double()) / 2  # running mean of pairs
        out[name] = avg.to(t.dtype)
    return out


# ---------------------------------------------------------------- correct


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    return {
        name: (
            torch.stack([sd[name] for sd in state_dicts])
            .mean(dim=0, dtype=torch.float64)
            .to(t.dtype)
            if t.is_floating_point()
            else t.clone()
        )
        for name, t in newest.items()
    }


def avg_accumulator(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    result: dict[str, Tensor] = {}
    for name, t in state_dicts[-1].items():
        if torch.is_floating_point(t):
            acc = torch.zeros(t.shape, dtype=torch.float64, device=t.device)
            for sd in state_dicts:
                acc.add_(sd[name].to(torch.float64))
            result[name] = acc.div_(K).to(dtype=t.dtype)
        else:
            result[name] = t.detach().clone()
    return result


def avg_deepcopy_then_replace(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[-1])  # new tensors everywhere, the step counter included
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            mean = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
            out[name] = mean.to(t.dtype)  # a fresh tensor per name, tied names too
    return out


def avg_weighted_sum(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    w = 1.0 / len(state_dicts)
    out = {}
    for name in state_dicts[-1]:
        newest = state_dicts[-1][name]
        if newest.dtype.is_floating_point:
            total = torch.zeros_like(newest, dtype=torch.float64)
            for sd in reversed(state_dicts):
                total = total + w * sd[name].double()
            out[name] = total.to(newest.dtype)
        else:
            out[name] = newest.clone()
    return out


CASES = [
    BlindCase(CHECK, "no_division", avg_no_division, "mistake", "summed but never divided by K"),
    BlindCase(CHECK, "last_only", avg_last_only, "mistake", "returned a copy of the newest"),
    BlindCase(
        CHECK,
        "skips_newest",
        avg_skips_newest,
        "mistake",
        "range(K - 1): the newest never added, still divided by K",
    ),
    BlindCase(
        CHECK,
        "step_averaged",
        avg_step_averaged,
        "mistake",
        "every entry averaged, the integer step counter too",
    ),
    BlindCase(
        CHECK,
        "in_place",
        avg_in_place,
        "mistake",
        "add_ into the newest checkpoint's tensors",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "summed in float64 and forgot to cast back",
    ),
    BlindCase(
        CHECK,
        "deepcopy_accumulate",
        avg_deepcopy_accumulate,
        "mistake",
        "deepcopy of the first checkpoint, += the others per name (tied weight added twice)",
    ),
    BlindCase(
        CHECK,
        "dedup_by_pointer",
        avg_dedup_by_pointer,
        "mistake",
        "skipped names whose tensor I had already seen (data_ptr), the tied name is missing",
    ),
    BlindCase(
        CHECK,
        "keeps_equal_tensors",
        avg_keeps_equal_tensors,
        "mistake",
        "kept a tensor that is equal in all checkpoints as it is (as the translator does)",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "integer entries copied from the first (oldest) checkpoint",
    ),
    BlindCase(
        CHECK,
        "mean_without_dim",
        avg_mean_without_dim,
        "mistake",
        "torch.stack(...).mean() without dim=0",
    ),
    BlindCase(
        CHECK,
        "running_halves",
        avg_running_halves,
        "mistake",
        "avg = (avg + next) / 2 for each checkpoint in turn",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0, dtype=float64), one dict comprehension",
    ),
    BlindCase(
        CHECK, "accumulator", avg_accumulator, "correct", "a float64 accumulator filled with add_"
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_replace",
        avg_deepcopy_then_replace,
        "correct",
        "deepcopy of the newest, floating entries replaced by new means",
    ),
    BlindCase(
        CHECK,
        "weighted_sum",
        avg_weighted_sum,
        "correct",
        "sum of w * tensor with w = 1/K, newest first",
    ),
]
