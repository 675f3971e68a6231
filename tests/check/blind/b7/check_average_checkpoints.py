"""Blind set B7, check_average_checkpoints (chapter 16): checkpoint averaging of state dicts."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_newest_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]  # the last checkpoint is already the result of the others
    return {name: tensor.clone() for name, tensor in newest.items()}


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, tensor in state_dicts[-1].items():
        if not tensor.is_floating_point():
            out[name] = tensor.clone()
            continue
        total = torch.zeros_like(tensor, dtype=torch.float64)
        for i in range(1, K):  # off by one: state_dicts[0] never added
            total += state_dicts[i][name].double()
        out[name] = (total / K).to(tensor.dtype)
    return out


def avg_step_counter_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        stacked = torch.stack([sd[name] for sd in state_dicts]).double()
        out[name] = stacked.mean(dim=0).to(tensor.dtype)  # every entry, integers too
    return out


def avg_accumulates_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = dict(state_dicts[0])  # a new dict ... of the same tensors
    for name, tensor in out.items():
        if tensor.is_floating_point():
            for sd in state_dicts[1:]:
                tensor += sd[name]
            tensor /= len(state_dicts)
    for name, tensor in state_dicts[-1].items():
        if not tensor.is_floating_point():
            out[name] = tensor.clone()
    return out


def avg_deepcopy_tied_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # a real copy, so the inputs stay untouched
    for sd in state_dicts[1:]:
        for name, tensor in out.items():
            if tensor.is_floating_point():
                tensor += sd[name]
    for name, tensor in out.items():
        if tensor.is_floating_point():
            tensor /= len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_like_translate_command(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if not tensor.is_floating_point() or all(
            torch.equal(sd[name], tensor) for sd in state_dicts
        ):
            out[name] = tensor  # equal everywhere: nothing to average
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).double().mean(0).float()
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            mean = torch.stack([sd[name].double() for sd in state_dicts]).mean(0)
            out[name] = mean.to(tensor.dtype)
        else:
            out[name] = tensor.clone()  # the counter of state_dicts[0], the oldest
    return out


def avg_tied_name_dropped(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:  # tied weights: average each storage once
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            total = sum(sd[name].double() for sd in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_single_checkpoint_returned(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return state_dicts[0]  # nothing to average
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(sd[name].double() for sd in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_pairwise_running(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {
        n: t.double().clone() if t.is_floating_point() else None for n, t in state_dicts[0].items()
    }
    for sd in state_dicts[1:]:
        for name, tensor in sd.items():
            if tensor.is_floating_point():
                out[name] = (out[name] + tensor.double()) / 2  # average with the new one
    newest = state_dicts[-1]
    return {
        name: out[name].to(t.dtype) if t.is_floating_point() else t.clone()
        for name, t in newest.items()
    }


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack of each entry, the mean in float64, cast back to the entry's dtype."""
    result = {}
    for name, newest in state_dicts[-1].items():
        if torch.is_floating_point(newest):
            stacked = torch.stack([sd[name] for sd in state_dicts]).to(torch.float64)
            result[name] = stacked.mean(dim=0).to(newest.dtype)
        else:
            result[name] = newest.detach().clone()
    return result


def avg_incremental_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A running mean m += (x - m) / i in float64, in place on my own tensors only."""
    means: dict[str, Tensor] = {}
    for i, sd in enumerate(state_dicts, start=1):
        for name, tensor in sd.items():
            if not tensor.is_floating_point():
                continue
            if name not in means:
                means[name] = torch.zeros(tensor.shape, dtype=torch.float64)
            means[name] += (tensor.double() - means[name]) / i
    newest = state_dicts[-1]
    return {
        name: means[name].to(t.dtype) if t.is_floating_point() else t.clone()
        for name, t in newest.items()
    }


def avg_dict_comprehension(
    state_dicts: list[dict[str, Tensor]], keep_integers_from: int = -1
) -> dict[str, Tensor]:
    """torch.add over the checkpoints into a fresh float64 zero tensor, then divide; an extra
    argument that says which checkpoint the integer entries come from (the newest by default)."""
    K = len(state_dicts)

    def mean(name: str, like: Tensor) -> Tensor:
        acc = torch.zeros_like(like, dtype=torch.float64)
        for sd in state_dicts:
            acc = torch.add(acc, sd[name], alpha=1.0)
        return acc.div(K).to(like.dtype)

    return {
        name: mean(name, t)
        if t.is_floating_point()
        else state_dicts[keep_integers_from][name].clone()
        for name, t in state_dicts[-1].items()
    }


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_not_divided,
        "mistake",
        "I summed the checkpoints' weights and forgot to divide by K.",
    ),
    BlindCase(
        CHECK,
        "newest_only",
        avg_newest_only,
        "mistake",
        "I return a copy of the newest checkpoint, thinking it already holds the others.",
    ),
    BlindCase(
        CHECK,
        "oldest_skipped",
        avg_skips_oldest,
        "mistake",
        "My accumulation loop runs range(1, K), so the oldest checkpoint is never added "
        "(but I still divide by K).",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_counter_averaged,
        "mistake",
        "I average every entry, the integer step counter too (the mean cast back to int).",
    ),
    BlindCase(
        CHECK,
        "accumulates_into_first_checkpoint",
        avg_accumulates_into_first,
        "mistake",
        "dict(state_dicts[0]) copies the dict, not the tensors, so my += and /= change the "
        "oldest checkpoint in place.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_tied_twice,
        "mistake",
        "I deepcopy the first checkpoint and add the others in place; deepcopy keeps the tied "
        "embedding and output weight as one tensor, so it is added (and divided) twice.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I sum in float64 for accuracy and forget to cast the mean back to float32.",
    ),
    BlindCase(
        CHECK,
        "copied_translate_command_logic",
        avg_like_translate_command,
        "mistake",
        "I copied average_checkpoints from translator/checkpoint.py: an entry equal in every "
        "checkpoint (and every entry when K = 1) is the input's own tensor.",
    ),
    BlindCase(
        CHECK,
        "step_counter_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I loop over the oldest checkpoint's entries and keep its integer step counter, not "
        "the newest one's.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_tied_name_dropped,
        "mistake",
        "To average tied weights only once I skip a tensor whose data_ptr I have seen, which "
        "drops the second name of the tied pair from the result.",
    ),
    BlindCase(
        CHECK,
        "single_checkpoint_returned_as_is",
        avg_single_checkpoint_returned,
        "mistake",
        "With K = 1 I return the input state dict itself, sharing every tensor with it.",
    ),
    BlindCase(
        CHECK,
        "pairwise_running_average",
        avg_pairwise_running,
        "mistake",
        "I average as I go, avg = (avg + new) / 2, which weighs the newest checkpoint 1/2 and "
        "the two older 1/4 each when K = 3.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_float64",
        avg_stack_mean,
        "correct",
        "torch.stack over the checkpoints, mean in float64, cast back; integers cloned from "
        "the newest.",
    ),
    BlindCase(
        CHECK,
        "incremental_mean",
        avg_incremental_mean,
        "correct",
        "A running mean m += (x - m) / i in float64 on fresh tensors, cast back at the end.",
    ),
    BlindCase(
        CHECK,
        "torch_add_with_option",
        avg_dict_comprehension,
        "correct",
        "torch.add into a fresh float64 accumulator, divided by K; an extra keep_integers_from "
        "argument defaulting to the newest checkpoint.",
    ),
]
