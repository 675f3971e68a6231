"""Blind set B12, check_average_checkpoints (chapter 16): averaging state dicts as readers write
it."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts)  # forgot to divide by K
        else:
            out[name] = t.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_divide_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    k = len(state_dicts)
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts) / max(k - 1, 1)
        else:
            out[name] = t.clone()
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    recent = state_dicts[1:] if len(state_dicts) > 1 else state_dicts  # range off by one
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in recent]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_everything(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        stacked = torch.stack([s[name].double() for s in state_dicts])
        out[name] = stacked.mean(0).to(t.dtype)  # the step counter averaged too
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = state_dicts[0]  # accumulate into the first checkpoint
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


def avg_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name].double() for s in state_dicts]).mean(0)  # exact
        else:
            out[name] = t.clone()
    return out


def avg_accumulate_shared(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.clone() for name, t in state_dicts[0].items()}
    # tied weights: the clones still must be one tensor, so I cloned by storage
    seen: dict[int, Tensor] = {}
    for name, t in state_dicts[0].items():
        key = t.data_ptr()
        if key in seen:
            out[name] = seen[key]
        else:
            seen[key] = out[name]
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] += t  # a tied tensor gets the sum twice
            else:
                out[name] = t.clone()
    done = set()
    for name, t in out.items():
        if t.is_floating_point() and id(t) not in done:
            t /= len(state_dicts)
            done.add(id(t))
    return out


def avg_unique_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    seen = set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # skip the tied duplicate, as model.parameters() does
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_keep_equal(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    newest = state_dicts[-1]
    for name, t in newest.items():
        if not t.is_floating_point() or all(torch.equal(s[name], t) for s in state_dicts):
            out[name] = t  # nothing to average: keep it as it is
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()  # the counter of the first checkpoint in the list
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) in the tensor's own dtype; the counter cloned."""
    out = {}
    for name, t in state_dicts[-1].items():
        if torch.is_floating_point(t):
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        else:
            out[name] = t.detach().clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A fresh accumulator per name (zeros), added to in place, then divided in place."""
    k = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = copy.deepcopy(t)
            continue
        acc = torch.zeros(t.shape, dtype=torch.float64)
        for s in state_dicts:
            acc += s[name].double()
        out[name] = (acc / k).to(t.dtype)
    return out


def avg_running_mean(
    state_dicts: list[dict[str, Tensor]], weights: list[float] | None = None
) -> dict[str, Tensor]:
    """An optional weights argument (default: equal) and a weighted sum with torch.zeros_like."""
    k = len(state_dicts)
    weights = [1.0 / k] * k if weights is None else weights
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = torch.zeros_like(t, dtype=torch.float64)
            for w, s in zip(weights, state_dicts):
                total = total + w * s[name].to(torch.float64)
            out[name] = total.to(t.dtype)
        else:
            out[name] = t.clone()
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
        "I returned a copy of the newest checkpoint, no averaging.",
    ),
    BlindCase(
        CHECK,
        "divide_by_k_minus_1",
        avg_divide_by_k_minus_1,
        "mistake",
        "I divided the sum by K - 1.",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_skips_oldest,
        "mistake",
        "My slice state_dicts[1:] leaves the oldest checkpoint out of the mean.",
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
        "accumulate_into_first",
        avg_in_place,
        "mistake",
        "I added the others into the first checkpoint's tensors in place and returned it.",
    ),
    BlindCase(
        CHECK,
        "result_float64",
        avg_float64,
        "mistake",
        "I averaged in float64 for accuracy and forgot to cast back.",
    ),
    BlindCase(
        CHECK,
        "tied_added_twice",
        avg_accumulate_shared,
        "mistake",
        "I kept tied weights as one tensor and added into each name, so the shared one "
        "got every checkpoint twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_unique_tensors,
        "mistake",
        "I skipped tensors whose memory I had seen already, so the tied name is missing.",
    ),
    BlindCase(
        CHECK,
        "keeps_unchanged_tensors",
        avg_keep_equal,
        "mistake",
        "Like translator/checkpoint.py I keep a tensor that is equal everywhere as it is, "
        "so it shares memory with the input.",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "The step counter comes from the first (oldest) checkpoint, not the newest.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) in the tensor's own dtype.",
    ),
    BlindCase(
        CHECK,
        "float64_accumulator",
        avg_deepcopy_accumulate,
        "correct",
        "A float64 zeros accumulator per name, added in place; deepcopy for the counter.",
    ),
    BlindCase(
        CHECK,
        "weighted_with_default",
        avg_running_mean,
        "correct",
        "An optional weights argument, equal by default; a weighted sum in float64.",
    ),
]
