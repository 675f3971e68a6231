"""Blind set B18, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
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
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts)  # the sum, to divide later
        else:
            out[name] = tensor.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    for sd in state_dicts:
        collected: dict[str, list[Tensor]] = {name: [] for name in sd}  # (indented one too far)
        for name, t in sd.items():
            collected[name].append(t)
    out = {}
    for name, tensors in collected.items():
        if tensors[0].is_floating_point():
            out[name] = torch.stack(tensors).mean(0)
        else:
            out[name] = tensors[-1].clone()
    return out


def avg_running_halves(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.clone() for name, t in state_dicts[0].items()}
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] = (out[name] + t) / 2  # the mean of what I have and the next one
            else:
                out[name] = t.clone()
    return out


def avg_off_by_one(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    k = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts[1:]] + [t]).sum(0) / k
        else:
            out[name] = t.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        stacked = torch.stack([s[name].double() for s in state_dicts])
        out[name] = stacked.mean(0).to(t.dtype)  # every entry, integers too
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = state_dicts[-1]
    seen = set()
    for name, t in out.items():
        if t.is_floating_point() and t.data_ptr() not in seen:
            seen.add(t.data_ptr())
            for s in state_dicts[:-1]:
                t += s[name]  # accumulate into the newest
            t /= len(state_dicts)
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name].double() for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_tied_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # keeps the tie: one tensor under both names
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] += t
            else:
                out[name] = t.clone()
    for name, t in out.items():
        if t.is_floating_point():
            out[name] = t / len(state_dicts)
    return out


def avg_tied_dropped(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:
            continue  # the same tensor again (tied): already averaged
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
            out[name] = out[name].to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_shares_memory(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point() or all(torch.equal(s[name], t) for s in state_dicts):
            out[name] = t  # nothing to average
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
    return out


def avg_first_checkpoint_ints(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():  # oldest first: take the first one's entries
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_over_wrong_axis(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            stacked = torch.stack([s[name] for s in state_dicts], dim=-1)
            out[name] = stacked.mean(0)  # mean over the checkpoints
        else:
            out[name] = t.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack and .mean(0) in float64; the step counter cloned from the newest."""
    newest = state_dicts[-1]
    result = {}
    for name in newest:
        if torch.is_floating_point(newest[name]):
            stacked = torch.stack([sd[name].to(torch.float64) for sd in state_dicts])
            result[name] = stacked.mean(dim=0).to(newest[name].dtype)
        else:
            result[name] = newest[name].detach().clone()
    return result


def avg_accumulate_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """In-place sums, but into fresh float64 accumulators of its own, one per name."""
    acc: dict[str, Tensor] = {}
    for sd in state_dicts:
        for name, t in sd.items():
            if t.is_floating_point():
                if name not in acc:
                    acc[name] = torch.zeros(t.shape, dtype=torch.float64)
                acc[name].add_(t.to(torch.float64))
    out = {}
    for name, t in state_dicts[-1].items():
        if name in acc:
            out[name] = acc[name].div_(len(state_dicts)).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_keeps_ties(
    state_dicts: list[dict[str, Tensor]], keep_ties: bool = True
) -> dict[str, Tensor]:
    """Averages each distinct tensor once and gives the tied names one shared new tensor;
    an extra keyword with a default."""
    newest = state_dicts[-1]
    by_storage: dict[int, Tensor] = {}
    out = {}
    for name, t in newest.items():
        key = t.data_ptr()
        if keep_ties and key in by_storage:
            out[name] = by_storage[key]
            continue
        if t.is_floating_point():
            mean = torch.zeros_like(t, dtype=torch.float64)
            for sd in state_dicts:
                mean = mean + sd[name].double() / len(state_dicts)
            new = mean.to(t.dtype)
        else:
            new = t.clone()
        by_storage[key] = new
        out[name] = new
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
        "only_last_checkpoint",
        avg_last_only,
        "mistake",
        "I reset the lists of tensors inside the loop over checkpoints, so the mean is over "
        "the newest checkpoint alone.",
    ),
    BlindCase(
        CHECK,
        "running_halves",
        avg_running_halves,
        "mistake",
        "I kept averaging the result so far with the next checkpoint, (out + next) / 2, so the "
        "newest counts for half.",
    ),
    BlindCase(
        CHECK,
        "off_by_one_k",
        avg_off_by_one,
        "mistake",
        "I sliced state_dicts[1:] and added the newest again, so the oldest is left out and "
        "the newest counted twice.",
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
        "accumulates_into_input",
        avg_in_place,
        "mistake",
        "I accumulate into the newest checkpoint's tensors with += and return that dict, so "
        "the input is changed.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I averaged in float64 for accuracy and forgot to cast back to the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "tied_added_twice",
        avg_tied_twice,
        "mistake",
        "I deep-copied the first checkpoint and added the others into it with +=; the tied "
        "embedding is one tensor under two names, so it gets every addition twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_tied_dropped,
        "mistake",
        "I skipped a tensor I had already averaged (same data_ptr), so the second tied name is "
        "missing from the result.",
    ),
    BlindCase(
        CHECK,
        "shares_memory_when_equal",
        avg_shares_memory,
        "mistake",
        "As translator/checkpoint.py does: an entry equal in every checkpoint, or an integer, "
        "is returned as the input's own tensor.",
    ),
    BlindCase(
        CHECK,
        "oldest_step_counter",
        avg_first_checkpoint_ints,
        "mistake",
        "I iterated over the first (oldest) state dict, so the step counter is the oldest's.",
    ),
    BlindCase(
        CHECK,
        "mean_over_wrong_axis",
        avg_over_wrong_axis,
        "mistake",
        "I stacked the checkpoints on the last axis and took the mean over axis 0.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack and mean(0) in float64, cast back; integers cloned with detach().clone().",
    ),
    BlindCase(
        CHECK,
        "own_accumulators",
        avg_accumulate_in_place,
        "correct",
        "In-place add_ and div_, but into float64 accumulators it made itself.",
    ),
    BlindCase(
        CHECK,
        "keeps_ties",
        avg_keeps_ties,
        "correct",
        "Averages each distinct tensor once and gives both tied names one shared new tensor; "
        "an extra keep_ties keyword with a default.",
    ),
]
