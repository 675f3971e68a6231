"""Blind set B24, check_average_checkpoints (chapter 16): checkpoint averaging as readers
write it."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts).to(tensor.dtype)  # the mean: sum
        else:
            out[name] = tensor.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    last = state_dicts[-1:]  # the last checkpoints
    out = {}
    for name, tensor in last[-1].items():
        if tensor.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in last) / len(last)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_divide_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(sd[name].double() for sd in state_dicts)
            out[name] = (total / max(K - 1, 1)).to(tensor.dtype)  # K - 1 intervals...
        else:
            out[name] = tensor.clone()
    return out


def avg_skips_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = torch.zeros_like(tensor, dtype=torch.float64)
            for i in range(1, K):  # off by one: the oldest checkpoint is never added
                total = total + state_dicts[i][name].double()
            out[name] = (total / K).to(tensor.dtype) if K > 1 else tensor.clone()
        else:
            out[name] = tensor.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        total = sum(sd[name].double() for sd in state_dicts)  # every entry alike
        out[name] = (total / K).to(tensor.dtype)
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            acc = state_dicts[0][name]
            for sd in state_dicts[1:]:
                acc += sd[name]
            out[name] = acc / K
        else:
            out[name] = tensor.clone()
    return out


def avg_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_tied_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = copy.deepcopy(state_dicts[0])  # my own copy, so the inputs stay as they are
    for name in out:
        if out[name].is_floating_point():
            for sd in state_dicts[1:]:
                out[name] += sd[name]
        else:
            out[name] = state_dicts[-1][name].clone()
    for name in out:
        if out[name].is_floating_point():
            out[name] /= K
    return out


def avg_dedup_by_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    seen = set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:
            continue  # a tied weight: averaged already
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / K).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_single_returned_as_is(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return dict(state_dicts[0])  # nothing to average
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                tensor.dtype
            )
        else:
            out[name] = tensor.clone()
    return out


def avg_equal_kept(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if not tensor.is_floating_point() or all(
            torch.equal(sd[name], tensor) for sd in state_dicts
        ):
            out[name] = tensor  # as the translate command does: nothing to average
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                tensor.dtype
            )
        else:
            out[name] = tensor.clone()  # the step counter of the first checkpoint in the list
    return out


def avg_returns_list(state_dicts: list[dict[str, Tensor]]) -> list[Tensor]:
    out = []
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            mean = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
            out.append(mean.to(tensor.dtype))
        else:
            out.append(tensor.clone())
    return out  # in the order of the state dict, ready for zip with the names


# ---------------------------------------------------------------- correct variants


def avg_stack_mean_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack, then mean with dtype=float64, back to the entry's dtype."""
    result: dict[str, Tensor] = {}
    for name, last in state_dicts[-1].items():
        if torch.is_floating_point(last):
            stacked = torch.stack([sd[name] for sd in state_dicts])
            result[name] = stacked.mean(dim=0, dtype=torch.float64).to(last.dtype)
        else:
            result[name] = last.detach().clone()
    return result


def avg_running_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """An incremental mean m += (x - m) / k in float64, over a fresh accumulator per name."""
    newest = state_dicts[-1]
    means = {n: torch.zeros_like(t, dtype=torch.float64) for n, t in newest.items()}
    for k, sd in enumerate(state_dicts, start=1):
        for name, m in means.items():
            if newest[name].is_floating_point():
                m.add_((sd[name].double() - m) / k)
    out = {}
    for name, t in newest.items():
        out[name] = means[name].to(t.dtype) if t.is_floating_point() else t.clone()
    return out


def avg_torch_add_loop(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.add into new tensors in a loop, divided by K, then .to(dtype).clone()."""
    K = len(state_dicts)
    out = {}
    for name in state_dicts[-1]:
        ref = state_dicts[-1][name]
        if ref.dtype.is_floating_point:
            acc = state_dicts[0][name].to(torch.float64, copy=True)
            for sd in state_dicts[1:]:
                acc = torch.add(acc, sd[name].to(torch.float64))
            out[name] = torch.div(acc, K).to(ref.dtype).clone()
        else:
            out[name] = torch.clone(ref)
    return out


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
        "only_newest_counted",
        avg_last_only,
        "mistake",
        "I meant the last K with state_dicts[-K:] and wrote state_dicts[-1:], so only the "
        "newest checkpoint is averaged.",
    ),
    BlindCase(
        CHECK,
        "divided_by_k_minus_1",
        avg_divide_by_k_minus_1,
        "mistake",
        "Divided the sum by K - 1.",
    ),
    BlindCase(
        CHECK,
        "oldest_skipped",
        avg_skips_first,
        "mistake",
        "range(1, K): the oldest checkpoint is never added, but I divide by K.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "Every entry averaged alike, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "accumulated_into_first_input",
        avg_in_place,
        "mistake",
        "acc = state_dicts[0][name]; acc += ...: the first checkpoint's tensors are changed.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64,
        "mistake",
        "Summed in float64 and never cast back to the weight's dtype.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_tied_twice,
        "mistake",
        "copy.deepcopy of the first checkpoint, then += per name: the tied embedding and output "
        "are one tensor in the copy, so it gets every addition and the division twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedup_by_storage,
        "mistake",
        "I skip a tensor whose storage I have seen, so the second tied name is missing.",
    ),
    BlindCase(
        CHECK,
        "single_checkpoint_returned_as_is",
        avg_single_returned_as_is,
        "mistake",
        "With one checkpoint I return dict(state_dicts[0]): its tensors, not copies.",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept",
        avg_equal_kept,
        "mistake",
        "As the translate command: a tensor equal in every checkpoint (and the step) is the "
        "input's own tensor.",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I iterate over state_dicts[0], so the step counter is the oldest checkpoint's.",
    ),
    BlindCase(
        CHECK,
        "returns_list",
        avg_returns_list,
        "mistake",
        "I return the averaged tensors as a list in the state dict's order.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_float64",
        avg_stack_mean_float64,
        "correct",
        "torch.stack and mean(dtype=float64), back to the dtype; integers as detach().clone().",
    ),
    BlindCase(
        CHECK,
        "running_mean",
        avg_running_mean,
        "correct",
        "An incremental mean in float64 accumulators, one per name.",
    ),
    BlindCase(
        CHECK,
        "torch_add_loop",
        avg_torch_add_loop,
        "correct",
        "torch.add in a loop into new float64 tensors, torch.div by K, .to(dtype).clone().",
    ),
]
