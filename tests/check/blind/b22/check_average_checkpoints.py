"""Blind set B22, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
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
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    return {name: t.clone() for name, t in newest.items()}


def avg_skips_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    later = state_dicts[1:] if len(state_dicts) > 1 else state_dicts
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in later]).mean(dim=0)
        else:
            out[name] = t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, t in state_dicts[-1].items():
        total = sum(sd[name] for sd in state_dicts)
        if t.is_floating_point():
            out[name] = total / K
        else:
            out[name] = total // K  # keep it an integer
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[0].items():
        if not t.is_floating_point():
            out[name] = state_dicts[-1][name].clone()
            continue
        acc = t.detach()
        for sd in state_dicts[1:]:
            acc += sd[name]
        acc /= K
        out[name] = acc.clone()
    return out


def avg_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name].double() for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[-1])  # new tensors: the inputs stay as they are
    for sd in state_dicts[:-1]:
        for name, t in avg.items():
            if t.is_floating_point():
                t += sd[name]
    for t in avg.values():
        if t.is_floating_point():
            t /= len(state_dicts)
    return avg


def avg_dedup_by_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    seen = set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:
            continue  # a tied weight: averaged once already
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_keeps_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    newest = state_dicts[-1]
    for name, t in newest.items():
        if not t.is_floating_point() or all(torch.equal(sd[name], t) for sd in state_dicts):
            out[name] = t  # nothing to average
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_stack_wrong_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts], dim=-1).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_varargs(*state_dicts: dict[str, Tensor]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    return {
        name: torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        if t.is_floating_point()
        else t.clone()
        for name, t in newest.items()
    }


def avg_reduce_add(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name in state_dicts[-1]:
        tensors = [sd[name] for sd in state_dicts]
        if tensors[-1].dtype.is_floating_point:
            total = functools.reduce(torch.add, (x.to(torch.float64) for x in tensors))
            out[name] = total.div(K).to(tensors[-1].dtype)
        else:
            out[name] = tensors[-1].detach().clone()
    return out


def avg_buffer_add_alpha(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, last in state_dicts[-1].items():
        if torch.is_floating_point(last):
            acc = torch.zeros_like(last, dtype=torch.float64)
            for sd in state_dicts:
                acc.add_(sd[name], alpha=1.0 / K)
            out[name] = acc.to(last.dtype)
        else:
            out[name] = torch.empty_like(last).copy_(last)
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_no_division,
        "mistake",
        "I summed the checkpoints and forgot to divide by K.",
    ),
    BlindCase(
        CHECK,
        "last_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint; nothing is averaged.",
    ),
    BlindCase(
        CHECK,
        "skips_first_checkpoint",
        avg_skips_first,
        "mistake",
        "I averaged state_dicts[1:], thinking the first is the starting point: K - 1 checkpoints.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too (with // to keep it an integer).",
    ),
    BlindCase(
        CHECK,
        "accumulates_into_input",
        avg_in_place,
        "mistake",
        "I accumulated with += into the first checkpoint's tensors, so the input changes.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64,
        "mistake",
        "I took the mean in float64 and did not convert back to the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_accumulate,
        "mistake",
        "I deep-copied the newest state dict and added the others into it in place; the tied "
        "names share one tensor in the copy, so it gets each addition twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedup_by_storage,
        "mistake",
        "I skipped a tensor whose storage I had seen, to average tied weights once, so the "
        "second tied name is missing.",
    ),
    BlindCase(
        CHECK,
        "keeps_equal_tensors",
        avg_keeps_equal_tensors,
        "mistake",
        "Like translator/checkpoint.py I keep a tensor equal in every checkpoint as it is, "
        "without a copy (also every tensor when K = 1).",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I loop over the first (oldest) checkpoint, so the step counter is the oldest one's.",
    ),
    BlindCase(
        CHECK,
        "stack_wrong_dim",
        avg_stack_wrong_dim,
        "mistake",
        "I stacked on dim=-1 and took the mean over dim 0.",
    ),
    BlindCase(
        CHECK,
        "varargs_signature",
        avg_varargs,
        "mistake",
        "I wrote def f(*state_dicts), so the list arrives as one argument.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "A dict comprehension: torch.stack(...).mean(0) for floats, clone() for integers.",
    ),
    BlindCase(
        CHECK,
        "reduce_add_float64",
        avg_reduce_add,
        "correct",
        "functools.reduce(torch.add) in float64, div(K), back to the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "zeros_add_alpha",
        avg_buffer_add_alpha,
        "correct",
        "A float64 zeros buffer per name, add_(x, alpha=1/K) for each checkpoint, then the "
        "dtype; integers copied into empty_like.",
    ),
]
