"""Blind set B8, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts).clone()  # the mean... I forgot / K
        else:
            out[name] = t.clone()
    return out


def avg_newest_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    # "the last checkpoint is the best one anyway"
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = torch.zeros_like(t)
            for i in range(1, K):  # started at 1 by habit
                total += state_dicts[i][name]
            out[name] = total / K
        else:
            out[name] = t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        mean = torch.stack([s[name].double() for s in state_dicts]).mean(0)
        out[name] = mean.to(t.dtype)  # integers too: the step becomes the mean step
    return out


def avg_accumulates_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            acc = state_dicts[0][name]  # no copy: adds into the oldest checkpoint
            for s in state_dicts[1:]:
                acc += s[name]
            out[name] = acc / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_left_in_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_deepcopy_inplace(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[0])  # deepcopy keeps the tied names on one tensor
    for s in state_dicts[1:]:
        for name in avg:
            if avg[name].is_floating_point():
                avg[name] += s[name]
    for name in avg:
        if avg[name].is_floating_point():
            avg[name] /= len(state_dicts)
        else:
            avg[name] = state_dicts[-1][name].clone()
    return avg


def avg_dedup_by_pointer(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:  # tied weight: already averaged, skip it
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_keeps_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    newest = state_dicts[-1]
    for name, t in newest.items():
        # as translator/checkpoint.py: what is the same everywhere is kept as it is
        if not t.is_floating_point() or all(torch.equal(s[name], t) for s in state_dicts):
            out[name] = t
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():  # iterate over the first checkpoint
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts).div(len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()  # the oldest step counter
    return out


def avg_stack_mean_everything(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {
        name: torch.stack([s[name] for s in state_dicts]).mean(dim=0) for name in state_dicts[-1]
    }


def avg_integer_not_copied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        else:
            out[name] = t  # the newest step counter, as it is
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        else:
            out[name] = t.clone()
    return out


def avg_running_clone(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.detach().clone()
            continue
        acc = state_dicts[0][name].detach().clone()
        for s in state_dicts[1:]:
            acc.add_(s[name])
        out[name] = acc.div_(len(state_dicts))
    return out


def avg_float64_comprehension(
    state_dicts: list[dict[str, Tensor]], weights: list[float] | None = None
) -> dict[str, Tensor]:
    K = len(state_dicts)
    w = [1.0 / K] * K if weights is None else weights
    newest = state_dicts[-1]
    return {
        name: (
            sum(wi * s[name].to(torch.float64) for wi, s in zip(w, state_dicts)).to(t.dtype)
            if torch.is_floating_point(t)
            else t.clone()
        )
        for name, t in newest.items()
    }


def avg_zeros_like_loop(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
            acc = torch.zeros_like(t, dtype=torch.float64)
            for s in state_dicts:
                acc = acc + s[name]
            out[name] = (acc / len(state_dicts)).to(t.dtype)
        else:
            out[name] = torch.empty_like(t).copy_(t)
    return out


def _case(name: str, code, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "sum_not_divided",
        avg_sum_not_divided,
        "mistake",
        "I summed the floating-point weights over the checkpoints and forgot to divide by K.",
    ),
    _case(
        "newest_only",
        avg_newest_only,
        "mistake",
        "I returned copies of the newest checkpoint's tensors, without averaging anything.",
    ),
    _case(
        "loop_skips_oldest",
        avg_skips_oldest,
        "mistake",
        "My loop runs range(1, K), leaving out the oldest checkpoint, but still divides by K.",
    ),
    _case(
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "Every entry goes through stack().mean() in float64 and back to its dtype, the integer "
        "step counter too, which becomes the mean step.",
    ),
    _case(
        "accumulates_into_oldest",
        avg_accumulates_into_first,
        "mistake",
        "acc = state_dicts[0][name] without a copy, then acc += the others: the oldest "
        "checkpoint's tensors are changed in place (and the tied pair added twice).",
    ),
    _case(
        "result_left_in_float64",
        avg_left_in_float64,
        "mistake",
        "I sum in float64 as advised but forgot to cast the mean back to the entry's dtype.",
    ),
    _case(
        "deepcopy_then_inplace",
        avg_deepcopy_inplace,
        "mistake",
        "copy.deepcopy(state_dicts[0]) then += and /= in place: deepcopy keeps the tied "
        "embedding and output weight on one tensor, so it is added and divided twice.",
    ),
    _case(
        "tied_name_skipped",
        avg_dedup_by_pointer,
        "mistake",
        "I skipped names whose tensor has a data_ptr I had already averaged, to avoid counting "
        "the tied weight twice; the second tied name is missing from the result.",
    ),
    _case(
        "equal_tensors_kept_as_is",
        avg_keeps_equal_tensors,
        "mistake",
        "I copied translator/checkpoint.py: tensors equal in all checkpoints (buffers, or "
        "everything when K = 1) and integers are returned as the input's own tensor.",
    ),
    _case(
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I iterate over state_dicts[0], so the integer step counter is the oldest "
        "checkpoint's, not the newest's.",
    ),
    _case(
        "stack_mean_on_integers",
        avg_stack_mean_everything,
        "mistake",
        "One dict comprehension with torch.stack(...).mean(0) for every entry; mean() refuses "
        "the integer step counter.",
    ),
    _case(
        "integer_entry_shared",
        avg_integer_not_copied,
        "mistake",
        "Floats averaged into new tensors, but the newest step counter is put in the result "
        "as the same tensor, sharing memory with the input.",
    ),
    _case(
        "stack_mean_clone_integers",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) in the entry's own dtype for floats, clone() for integers.",
    ),
    _case(
        "running_sum_on_clone",
        avg_running_clone,
        "correct",
        "Clones the oldest tensor, add_ the others in place into the clone, div_ by K.",
    ),
    _case(
        "weighted_float64_comprehension",
        avg_float64_comprehension,
        "correct",
        "A dict comprehension summing w_i * tensor in float64 with equal weights 1/K (weights "
        "an optional argument), cast back to the dtype.",
    ),
    _case(
        "zeros_like_float64_loop",
        avg_zeros_like_loop,
        "correct",
        "A float64 zeros_like accumulator per entry, divided and cast back; integers copied "
        "with empty_like().copy_().",
    ),
]
