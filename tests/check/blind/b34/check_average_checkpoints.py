"""Blind set B34, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_only_last(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_divide_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = max(len(state_dicts) - 1, 1)  # the number of intervals between checkpoints
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts) / K
        else:
            out[name] = t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        total = sum(s[name].double() for s in state_dicts)
        out[name] = (total / len(state_dicts)).to(t.dtype)  # every entry the same way
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = state_dicts[0]
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] += t
            else:
                out[name] = t
    for name, t in out.items():
        if t.is_floating_point():
            t /= len(state_dicts)
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_tied_name_dropped(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # the same tensor twice: skip the duplicate
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_keeps_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point() or all(torch.equal(s[name], t) for s in state_dicts):
            out[name] = t  # nothing to average
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        else:
            out[name] = t.clone()  # the first checkpoint's counter
    return out


def avg_stack_wrong_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts], dim=-1).mean(dim=0)
        else:
            out[name] = t.clone()
    return out


def avg_skips_newest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    older = state_dicts[:-1] or state_dicts
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in older]).mean(dim=0)
        else:
            out[name] = t.clone()
    return out


def avg_pairwise_running(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.clone() for name, t in state_dicts[0].items()}
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] = (out[name] + t) / 2  # running mean of the two
            else:
                out[name] = t.clone()
    return out


def avg_detached_view(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            mean = torch.stack([s[name] for s in state_dicts]).mean(0)
            t.copy_(mean)  # write it into the newest checkpoint's tensor
            out[name] = t.clone()
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_float64_cast_back(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    return {
        name: (
            torch.stack([s[name] for s in state_dicts]).mean(dim=0)
            if t.is_floating_point()
            else t.detach().clone()
        )
        for name, t in newest.items()
    }


def avg_accumulate_own_copies(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    acc = {n: torch.zeros_like(t, dtype=torch.float64) for n, t in state_dicts[-1].items()}
    for s in state_dicts:
        for n in acc:
            if s[n].is_floating_point():
                acc[n].add_(s[n], alpha=1.0 / K)  # in place, on my own tensors
    out = {}
    for n, t in state_dicts[-1].items():
        out[n] = acc[n].to(t.dtype) if t.is_floating_point() else t.clone()
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_not_divided,
        "mistake",
        "I summed the checkpoints and forgot to divide by K",
    ),
    BlindCase(
        CHECK, "only_last", avg_only_last, "mistake", "I returned a copy of the newest checkpoint"
    ),
    BlindCase(
        CHECK,
        "divide_k_minus_1",
        avg_divide_k_minus_1,
        "mistake",
        "I divided by len(state_dicts) - 1",
    ),
    BlindCase(
        CHECK,
        "step_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too",
    ),
    BlindCase(
        CHECK,
        "in_place",
        avg_in_place,
        "mistake",
        "I added the others into the first state dict with += and divided it in place",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I summed in float64 and did not convert back",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_tied_name_dropped,
        "mistake",
        "I skipped a name whose tensor I had already averaged",
    ),
    BlindCase(
        CHECK,
        "keeps_equal_tensors",
        avg_keeps_equal_tensors,
        "mistake",
        "I kept the tensor itself when it is the same in every checkpoint",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I kept the step counter of the first checkpoint in the list",
    ),
    BlindCase(
        CHECK,
        "stack_wrong_dim",
        avg_stack_wrong_dim,
        "mistake",
        "I stacked on the last dim and took the mean over dim 0",
    ),
    BlindCase(
        CHECK,
        "skips_newest",
        avg_skips_newest,
        "mistake",
        "I averaged state_dicts[:-1], leaving out the newest",
    ),
    BlindCase(
        CHECK,
        "pairwise_running",
        avg_pairwise_running,
        "mistake",
        "I kept a running mean as (mean + next) / 2",
    ),
    BlindCase(
        CHECK,
        "writes_newest",
        avg_detached_view,
        "mistake",
        "I copied the mean into the newest checkpoint's tensors, then cloned them",
    ),
    BlindCase(
        CHECK,
        "float64_cast_back",
        avg_float64_cast_back,
        "correct",
        "sum in float64, divide, cast back; ints cloned from the newest",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) in the tensor's own dtype, ints cloned",
    ),
    BlindCase(
        CHECK,
        "accumulate_own_copies",
        avg_accumulate_own_copies,
        "correct",
        "add_ with alpha 1/K into my own float64 zeros, then cast",
    ),
]
