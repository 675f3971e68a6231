"""Blind set B33, check_average_checkpoints (chapter 16): checkpoint averaging as readers write it."""

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
            out[name] = sum(s[name] for s in state_dicts).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_newest_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    # the newest checkpoint already contains everything the older ones learned
    return {name: tensor.clone() for name, tensor in state_dicts[-1].items()}


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = torch.zeros_like(tensor, dtype=torch.float64)
            for i in range(1, K):  # the others are added to the first...
                total += state_dicts[i][name].double()
            out[name] = (total / K).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_divide_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    K = len(state_dicts)
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / max(K - 1, 1)).to(tensor.dtype)  # unbiased, like a variance
        else:
            out[name] = tensor.clone()
    return out


def avg_step_counter_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        total = sum(s[name].double() for s in state_dicts)
        out[name] = (total / len(state_dicts)).to(tensor.dtype)  # every entry the same way
    return out


def avg_accumulate_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if not tensor.is_floating_point():
            out[name] = tensor.clone()
            continue
        acc = state_dicts[0][name]
        for s in state_dicts[1:]:
            acc += s[name]
        out[name] = acc / K
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name].double() for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # a copy, so the inputs stay as they were
    for s in state_dicts[1:]:
        for name, tensor in out.items():
            if tensor.is_floating_point():
                tensor += s[name]
    for name, tensor in out.items():
        if tensor.is_floating_point():
            tensor /= len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_dedupe_by_pointer(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    seen = set()
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:  # tied weights: average them only once
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_keep_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if not tensor.is_floating_point() or all(torch.equal(s[name], tensor) for s in state_dicts):
            out[name] = tensor  # nothing to average
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            total = sum(s[name].double() for s in state_dicts)
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_step_not_copied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        else:
            out[name] = tensor  # an integer, nothing to average
    return out


def avg_mean_without_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean()
        else:
            out[name] = tensor.clone()
    return out


def avg_stack_everything(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {
        name: torch.stack([s[name] for s in state_dicts]).mean(dim=0) for name in state_dicts[-1]
    }


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if torch.is_floating_point(tensor):
            stacked = torch.stack([s[name].to(torch.float64) for s in state_dicts])
            out[name] = stacked.mean(dim=0).to(tensor.dtype)
        else:
            out[name] = tensor.detach().clone()
    return out


def avg_running_sum(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name in state_dicts[-1]:
        ref = state_dicts[-1][name]
        if not ref.dtype.is_floating_point:
            out[name] = ref.clone()
            continue
        acc = torch.zeros(ref.shape, dtype=torch.float64)  # my own buffer, safe to add into
        for s in state_dicts:
            acc.add_(s[name])
        acc.div_(K)
        out[name] = acc.to(ref.dtype)
    return out


def avg_float32_mean_clone(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            mean = torch.stack([s[name].float() for s in state_dicts]).mean(dim=0)
            out[name] = mean.to(tensor.dtype).clone()
        else:
            out[name] = torch.tensor(tensor.tolist(), dtype=tensor.dtype)
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
        "newest_only",
        avg_newest_only,
        "mistake",
        "I returned a copy of the newest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "oldest_left_out",
        avg_skips_oldest,
        "mistake",
        "My loop over the checkpoints started at 1, so the oldest one is not in the sum, but I "
        "still divided by K.",
    ),
    BlindCase(
        CHECK,
        "divided_by_k_minus_1",
        avg_divide_by_k_minus_1,
        "mistake",
        "I divided by K - 1.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_counter_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too, and cast it back to its dtype.",
    ),
    BlindCase(
        CHECK,
        "accumulated_into_first",
        avg_accumulate_into_first,
        "mistake",
        "I added the other checkpoints into the first one's tensors with +=.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I averaged in float64 for precision and did not cast back.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_in_place",
        avg_deepcopy_in_place,
        "mistake",
        "I deep-copied the first state dict and added the others into the copy in place.",
    ),
    BlindCase(
        CHECK,
        "tied_name_skipped",
        avg_dedupe_by_pointer,
        "mistake",
        "I skipped a tensor whose data_ptr I had already seen, so the tied weight is averaged "
        "once.",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept",
        avg_keep_equal_tensors,
        "mistake",
        "Like the translator's code, I kept a tensor that is the same in every checkpoint as it "
        "is, without copying it.",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I went through the names of the first checkpoint and cloned its integer entries.",
    ),
    BlindCase(
        CHECK,
        "step_not_cloned",
        avg_step_not_copied,
        "mistake",
        "I averaged the float entries with torch.stack(...).mean(dim=0) and returned the integer "
        "step counter itself.",
    ),
    BlindCase(
        CHECK,
        "mean_without_dim",
        avg_mean_without_dim,
        "mistake",
        "I wrote torch.stack(...).mean() without dim=0.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_everything",
        avg_stack_everything,
        "mistake",
        "One dict comprehension: torch.stack(...).mean(dim=0) for every name, the step counter "
        "included.",
    ),
    BlindCase(
        CHECK,
        "stack_float64_mean",
        avg_stack_mean,
        "correct",
        "torch.stack of the float64 copies, mean over dim 0, back to the dtype; integers cloned "
        "from the newest.",
    ),
    BlindCase(
        CHECK,
        "running_sum_own_buffer",
        avg_running_sum,
        "correct",
        "A float64 zero buffer of my own, add_ every checkpoint, div_ by K, cast back.",
    ),
    BlindCase(
        CHECK,
        "float32_mean_fresh_int",
        avg_float32_mean_clone,
        "correct",
        "The mean in float32, cast and cloned; the step counter rebuilt with torch.tensor from "
        "its value.",
    ),
]
