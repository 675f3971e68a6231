"""Blind set B16, check_average_checkpoints (chapter 16): checkpoint averaging as readers write it."""

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


def avg_newest_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    # the newest checkpoint is already the best estimate
    return {name: tensor.clone() for name, tensor in state_dicts[-1].items()}


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if tensor.is_floating_point():
            stacked = torch.stack([s[name] for s in state_dicts[1:]])  # the last K - 1
            out[name] = stacked.mean(dim=0)
        else:
            out[name] = tensor.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        total = sum(s[name].double() for s in state_dicts)  # every entry, the step counter too
        out[name] = (total / len(state_dicts)).to(tensor.dtype)
    return out


def avg_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = dict(state_dicts[0])  # a new dict, so the checkpoint is safe
    for name, tensor in avg.items():
        if tensor.is_floating_point():
            for other in state_dicts[1:]:
                tensor += other[name]
            tensor /= len(state_dicts)
    avg.update({n: t for n, t in state_dicts[-1].items() if not t.is_floating_point()})
    return avg


def avg_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[-1])  # my own copy, nothing shared with the input
    for name, tensor in avg.items():
        if tensor.is_floating_point():
            for other in state_dicts[:-1]:
                tensor.add_(other[name])
            tensor.div_(len(state_dicts))
    return avg


def avg_unique_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:  # a tied weight: averaged already
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_single_returned(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return dict(state_dicts[0])  # nothing to average
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_translator_logic(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if not tensor.is_floating_point() or all(torch.equal(s[name], tensor) for s in state_dicts):
            out[name] = tensor  # as average_checkpoints in translator/checkpoint.py
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
    return out


def avg_step_of_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():  # the first checkpoint's names and counters
        if tensor.is_floating_point():
            out[name] = (sum(s[name].double() for s in state_dicts) / len(state_dicts)).to(
                tensor.dtype
            )
        else:
            out[name] = tensor.clone()
    return out


def avg_stack_last_axis(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts], dim=-1).mean(0)
        else:
            out[name] = tensor.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) in the tensor's own dtype (float32 rounding)."""
    return {
        name: torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        if tensor.is_floating_point()
        else tensor.clone()
        for name, tensor in state_dicts[-1].items()
    }


def avg_accumulate_in_place(
    state_dicts: list[dict[str, Tensor]], dtype: torch.dtype = torch.float64
) -> dict[str, Tensor]:
    """A zero accumulator per name, summed into with add_ (my own tensor), then divided."""
    newest = state_dicts[-1]
    result: dict[str, Tensor] = {}
    for name, tensor in newest.items():
        if not torch.is_floating_point(tensor):
            result[name] = tensor.detach().clone()
            continue
        acc = torch.zeros_like(tensor, dtype=dtype)
        for state in state_dicts:
            acc.add_(state[name].to(dtype))
        acc.div_(len(state_dicts))
        result[name] = acc.to(tensor.dtype)
    return result


def avg_reduce(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """functools.reduce(torch.add) over float64 copies; integers copied with torch.clone."""
    k = len(state_dicts)
    averaged = {}
    for name in state_dicts[-1]:
        latest = state_dicts[-1][name]
        if latest.dtype.is_floating_point:
            total = functools.reduce(torch.add, (s[name].to(torch.float64) for s in state_dicts))
            averaged[name] = total.div(k).to(dtype=latest.dtype, copy=True)
        else:
            averaged[name] = torch.clone(latest)
    return averaged


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
        "newest_only",
        avg_newest_only,
        "mistake",
        "I returned copies of the newest checkpoint's tensors without averaging.",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_skips_oldest,
        "mistake",
        "I averaged state_dicts[1:], leaving out the oldest checkpoint (K - 1 of them).",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "accumulated_into_first",
        avg_into_first,
        "mistake",
        "I copied the first dict with dict(...) and added the others into its tensors with +=, "
        "which changes the caller's first checkpoint.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64,
        "mistake",
        "I summed in float64 as advised but forgot to turn the mean back into the weight's dtype.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_in_place",
        avg_deepcopy_in_place,
        "mistake",
        "I deep-copied the newest state dict and added the others into it in place, name by "
        "name; the tied embedding and output weight are one tensor in the copy, so it is added "
        "to (and divided) twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_skipped",
        avg_unique_tensors,
        "mistake",
        "I skipped a tensor whose data_ptr I had already seen, so the second name of the tied "
        "weight is missing.",
    ),
    BlindCase(
        CHECK,
        "single_checkpoint_returned",
        avg_single_returned,
        "mistake",
        "With one checkpoint I return dict(state_dicts[0]) since there is nothing to average; "
        "its tensors are the input's.",
    ),
    BlindCase(
        CHECK,
        "translator_logic",
        avg_translator_logic,
        "mistake",
        "I copied the logic of translator/checkpoint.py: integer entries and entries equal in "
        "every checkpoint are the newest checkpoint's own tensors.",
    ),
    BlindCase(
        CHECK,
        "step_of_oldest",
        avg_step_of_oldest,
        "mistake",
        "I walked over the first checkpoint's entries and cloned its step counter, the oldest one.",
    ),
    BlindCase(
        CHECK,
        "stack_last_axis",
        avg_stack_last_axis,
        "mistake",
        "I stacked the checkpoints on dim=-1 and took the mean over dim 0.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_own_dtype",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) in the weight's own dtype instead of a float64 sum.",
    ),
    BlindCase(
        CHECK,
        "accumulate_in_place",
        avg_accumulate_in_place,
        "correct",
        "A zeros_like float64 accumulator per name, add_ and div_ on it (my own tensor), an "
        "extra dtype argument; integers copied with detach().clone().",
    ),
    BlindCase(
        CHECK,
        "functools_reduce",
        avg_reduce,
        "correct",
        "functools.reduce(torch.add, ...) over float64 copies, .to(dtype, copy=True).",
    ),
]
