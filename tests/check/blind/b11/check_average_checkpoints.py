"""Blind set B11, check_average_checkpoints (chapter 16): checkpoint averaging as readers
write it."""

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
            out[name] = sum(sd[name] for sd in state_dicts)  # the mean... of the sum
        else:
            out[name] = t.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    return {name: t.clone() for name, t in newest.items()}


def avg_first_counted_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if not t.is_floating_point():
            out[name] = state_dicts[-1][name].clone()
            continue
        total = t.clone()
        for sd in state_dicts:  # should start at state_dicts[1:]
            total += sd[name]
        out[name] = total / len(state_dicts)
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = (
                sum(state_dicts[i][name] for i in range(1, K)) / (K - 1) if K > 1 else t.clone()
            )
        else:
            out[name] = t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([sd[name] for sd in state_dicts])
        out[name] = stacked.double().mean(0).to(stacked.dtype)  # every entry the same way
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name in state_dicts[0]:
        acc = state_dicts[0][name]
        if acc.is_floating_point():
            for sd in state_dicts[1:]:
                acc += sd[name]  # accumulate into the first checkpoint's tensor
            acc /= K
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


def avg_deepcopy_tied_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # a copy, so the inputs stay as they are
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


def avg_dedup_by_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    seen = set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # a tied weight: already averaged
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        else:
            out[name] = t.clone()
    return out


def avg_keeps_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    newest = state_dicts[-1]
    for name, t in newest.items():
        if not t.is_floating_point() or all(torch.equal(sd[name], t) for sd in state_dicts):
            out[name] = t  # nothing to average: kept as it is, bit for bit
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
    return out


def avg_oldest_step(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        else:
            out[name] = t.clone()  # the step of the first checkpoint in the list
    return out


def avg_wrong_axis(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts], dim=-1).mean(dim=0)
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) in the entry's own dtype; integer entries cloned."""
    newest = state_dicts[-1]
    return {
        name: torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        if t.is_floating_point()
        else t.clone()
        for name, t in newest.items()
    }


def avg_running_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """An accumulator cloned from the newest, added to and divided in place (its own memory)."""
    K = len(state_dicts)
    result = {}
    for name, t in state_dicts[-1].items():
        acc = t.detach().clone()
        if acc.is_floating_point():
            for sd in state_dicts[:-1]:
                acc.add_(sd[name])
            acc.div_(K)
        result[name] = acc
    return result


def avg_float64_accumulator(
    state_dicts: list[dict[str, Tensor]], weights: list[float] | None = None
) -> dict[str, Tensor]:
    """float64 accumulators from zeros_like, an optional weights argument (None = the mean),
    the result cast back to each entry's dtype."""
    K = len(state_dicts)
    w = [1.0 / K] * K if weights is None else weights
    averaged: dict[str, Tensor] = {}
    for name in state_dicts[-1].keys():
        ref = state_dicts[-1][name]
        if not torch.is_floating_point(ref):
            averaged[name] = ref.detach().clone()
            continue
        acc = torch.zeros_like(ref, dtype=torch.float64)
        for wi, sd in zip(w, state_dicts):
            acc += wi * sd[name].to(torch.float64)
        averaged[name] = acc.to(ref.dtype)
    return averaged


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
        "I returned a copy of the newest checkpoint, thinking it already holds the averaged run.",
    ),
    BlindCase(
        CHECK,
        "first_counted_twice",
        avg_first_counted_twice,
        "mistake",
        "My accumulator starts as a copy of the first checkpoint and the loop then adds all K, "
        "so the first one is counted twice.",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_skips_oldest,
        "mistake",
        "range(1, K): I averaged only the last K - 1 checkpoints.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry the same way, so the integer step counter becomes the "
        "(rounded) mean step.",
    ),
    BlindCase(
        CHECK,
        "accumulates_into_input",
        avg_in_place,
        "mistake",
        "I accumulated with += into the first checkpoint's own tensor, changing the input.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64,
        "mistake",
        "I summed in float64 for accuracy and forgot to cast back to the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_tied_twice,
        "mistake",
        "I deep-copied the first state dict and added the others in place; deepcopy keeps the "
        "tied embedding and output weight as one tensor, so it gets every addition and "
        "division twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedup_by_storage,
        "mistake",
        "I skipped tensors whose storage I had already seen, to average tied weights once, and "
        "so the second tied name is missing.",
    ),
    BlindCase(
        CHECK,
        "keeps_equal_tensors",
        avg_keeps_equal_tensors,
        "mistake",
        "Like the translate command, I keep a tensor equal in every checkpoint (and the step "
        "counter) as it is, shared with the input.",
    ),
    BlindCase(
        CHECK,
        "oldest_step",
        avg_oldest_step,
        "mistake",
        "The step counter comes from the first (oldest) checkpoint of the list.",
    ),
    BlindCase(
        CHECK,
        "stack_wrong_axis",
        avg_wrong_axis,
        "mistake",
        "I stacked on the last axis and took the mean over dim 0.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "A dict comprehension with torch.stack(...).mean(0) in the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "running_in_place",
        avg_running_in_place,
        "correct",
        "A clone of the newest entry as accumulator, add_ and div_ in place on that clone.",
    ),
    BlindCase(
        CHECK,
        "float64_accumulator_weights",
        avg_float64_accumulator,
        "correct",
        "float64 accumulators, 1/K weights (an optional weights argument), cast back.",
    ),
]
