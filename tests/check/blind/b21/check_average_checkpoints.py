"""Blind set B21, check_average_checkpoints (chapter 16): checkpoint averaging as readers write it."""

from __future__ import annotations

import copy
from functools import reduce

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts)  # forgot / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = t.clone()  # start from the newest ...
            for s in state_dicts[1:]:  # ... and add the others: meant [:-1]
                total += s[name]
            out[name] = total / K
        else:
            out[name] = t.clone()
    return out


def avg_divides_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    n = max(len(state_dicts) - 1, 1)  # "the number of intervals"
    for name, t in state_dicts[-1].items():
        out[name] = sum(s[name] for s in state_dicts) / n if t.is_floating_point() else t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        mean = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        out[name] = mean.to(t.dtype)  # every entry, the step counter too
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = dict(state_dicts[-1])  # a new dict ... of the same tensors
    for name, t in out.items():
        if t.is_floating_point():
            for s in state_dicts[:-1]:
                t += s[name]
            t /= len(state_dicts)
    return out


def avg_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_int_not_copied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        else:
            out[name] = t  # the newest checkpoint's step counter, as it is
    return out


def avg_only_last(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_deepcopy_inplace(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # deepcopy keeps the tied entries one tensor
    for name, t in out.items():
        if t.is_floating_point():
            for s in state_dicts[1:]:
                t.add_(s[name])
            t.div_(len(state_dicts))
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_drops_tied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # a tied weight: already averaged, skip it
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_buffers_kept(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    newest = state_dicts[-1]
    for name, t in newest.items():
        same = all(torch.equal(s[name], t) for s in state_dicts)
        if not t.is_floating_point() or same:
            out[name] = t.clone() if not t.is_floating_point() else t  # equal everywhere: keep
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()  # the first checkpoint's counter
    return out


def avg_stack_wrong_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts], dim=-1).mean(0)
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) in the tensor's own dtype; integers cloned."""
    newest = state_dicts[-1]
    return {
        name: torch.stack([s[name] for s in state_dicts]).mean(0)
        if t.is_floating_point()
        else t.detach().clone()
        for name, t in newest.items()
    }


def avg_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A float64 accumulator filled with add_, divided with div_, cast back."""
    out: dict[str, Tensor] = {}
    for name, t in state_dicts[-1].items():
        if not torch.is_floating_point(t):
            out[name] = t.clone()
            continue
        acc = torch.zeros(t.shape, dtype=torch.float64, device=t.device)
        for s in state_dicts:
            acc.add_(s[name].to(torch.float64))
        out[name] = acc.div_(len(state_dicts)).to(t.dtype)
    return out


def avg_reduce_deepcopy(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """deepcopy of the newest, then every float entry replaced (assigned, not written into)."""
    out = copy.deepcopy(state_dicts[-1])
    for name, t in out.items():
        if t.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
            total = reduce(torch.add, (s[name].double() for s in state_dicts))
            out[name] = torch.div(total, len(state_dicts)).to(t.dtype)
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
        CHECK,
        "skips_oldest",
        avg_skips_oldest,
        "mistake",
        "started from the newest and added state_dicts[1:] (meant [:-1])",
    ),
    BlindCase(
        CHECK,
        "divides_by_k_minus_1",
        avg_divides_by_k_minus_1,
        "mistake",
        "divided the sum by K - 1",
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
        "added the older checkpoints into the newest one's tensors with +=",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64,
        "mistake",
        "summed in float64 and forgot to cast back to the tensor's dtype",
    ),
    BlindCase(
        CHECK,
        "int_not_copied",
        avg_int_not_copied,
        "mistake",
        "the step counter returned as the input's own tensor, not a copy",
    ),
    BlindCase(
        CHECK, "only_last", avg_only_last, "mistake", "I returned a copy of the newest checkpoint"
    ),
    BlindCase(
        CHECK,
        "deepcopy_inplace",
        avg_deepcopy_inplace,
        "mistake",
        "deepcopy of the first checkpoint, then add_/div_ into it (tied weights alias)",
    ),
    BlindCase(
        CHECK,
        "drops_tied",
        avg_drops_tied,
        "mistake",
        "I skipped a name whose tensor I had already seen, to avoid averaging ties twice",
    ),
    BlindCase(
        CHECK,
        "buffers_kept",
        avg_buffers_kept,
        "mistake",
        "a float tensor equal in all checkpoints is kept as the input's own tensor",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I iterated over the oldest checkpoint and kept its step counter",
    ),
    BlindCase(
        CHECK,
        "stack_wrong_dim",
        avg_stack_wrong_dim,
        "mistake",
        "stacked on dim=-1 and took mean(0)",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) in the own dtype; integers detached and cloned",
    ),
    BlindCase(
        CHECK,
        "float64_accumulator",
        avg_accumulate,
        "correct",
        "a float64 accumulator with add_ and div_, cast back",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_assign",
        avg_reduce_deepcopy,
        "correct",
        "deepcopy of the newest, then float entries replaced via functools.reduce",
    ),
]
