"""Blind set B19, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

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
            out[name] = sum(s[name] for s in state_dicts)  # the division got lost
        else:
            out[name] = tensor.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}  # the newest is the best


def avg_divide_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = state_dicts[0][name].clone()
            for s in state_dicts[1:]:
                total += s[name]
            out[name] = total / max(K - 1, 1)  # I counted the additions
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
                total += state_dicts[i][name]
            out[name] = (total / K).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([s[name].double() for s in state_dicts])
        out[name] = stacked.mean(0).to(state_dicts[-1][name].dtype)  # the same for every entry
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            total = state_dicts[0][name].clone()
            for s in state_dicts[1:]:
                total += s[name]
            tensor.copy_(total / len(state_dicts))  # into the newest checkpoint, then copied
            out[name] = tensor.clone()
        else:
            out[name] = tensor.clone()
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = copy.deepcopy(state_dicts[0])  # my own copy, so += is safe
    for s in state_dicts[1:]:
        for name, tensor in avg.items():
            if tensor.is_floating_point():
                tensor += s[name]
    for name, tensor in avg.items():
        if tensor.is_floating_point():
            tensor /= len(state_dicts)
        else:
            avg[name] = state_dicts[-1][name].clone()
    return avg


def avg_dedup_drops_tied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    seen = set()
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:  # a tied weight: already averaged under its other name
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_k1_returns_input(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return state_dicts[0]  # nothing to average
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_int_not_copied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor  # the step counter, kept as the newest has it
    return out


def avg_int_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()  # from the first checkpoint of the list
    return out


def avg_mean_without_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean()  # forgot dim=0
        else:
            out[name] = tensor.clone()
    return out


def avg_unchanged_kept(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if not tensor.is_floating_point() or all(torch.equal(s[name], tensor) for s in state_dicts):
            out[name] = tensor  # the same everywhere (a buffer, the step): nothing to average
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {
        name: torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        if tensor.is_floating_point()
        else tensor.clone()
        for name, tensor in state_dicts[-1].items()
    }


def avg_running_sum(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {name: newest[name].detach().clone() for name in newest}  # fresh tensors per name
    for s in state_dicts[:-1]:
        for name, tensor in out.items():
            if tensor.is_floating_point():
                tensor.add_(s[name])
    for tensor in out.values():
        if tensor.is_floating_point():
            tensor.div_(len(state_dicts))
    return out


def avg_float64_accumulators(
    state_dicts: list[dict[str, Tensor]], weights: list[float] | None = None
) -> dict[str, Tensor]:
    K = len(state_dicts)
    weights = [1.0 / K] * K if weights is None else weights
    result = {}
    for name, last in state_dicts[-1].items():
        if not torch.is_floating_point(last):
            result[name] = torch.empty_like(last).copy_(last)
            continue
        acc = torch.zeros(last.shape, dtype=torch.float64)
        for w, s in zip(weights, state_dicts):
            acc.add_(s[name].to(torch.float64), alpha=w)
        result[name] = acc.to(last.dtype)
    return result


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_not_divided,
        "mistake",
        "I summed the checkpoints and forgot to divide by K.",
    ),
    BlindCase(
        CHECK,
        "last_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint, no average.",
    ),
    BlindCase(
        CHECK,
        "divide_by_k_minus_1",
        avg_divide_by_k_minus_1,
        "mistake",
        "I divided by the number of additions, K - 1, instead of K.",
    ),
    BlindCase(
        CHECK,
        "skips_oldest",
        avg_skips_first,
        "mistake",
        "My loop ran over range(1, K), so the oldest checkpoint is left out of the sum.",
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
        "writes_into_newest",
        avg_in_place,
        "mistake",
        "I wrote the mean into the newest checkpoint's tensors with copy_ and returned "
        "copies, so the input changes.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I summed in float64 and returned the float64 mean without converting back.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_accumulate",
        avg_deepcopy_accumulate,
        "mistake",
        "I deep-copied the first checkpoint and added the others in place; deepcopy keeps "
        "the tied embedding and output as one tensor, so it is added and divided twice.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_dedup_drops_tied,
        "mistake",
        "I skipped a tensor already seen (same data_ptr) to avoid averaging tied weights "
        "twice, so the second tied name is missing.",
    ),
    BlindCase(
        CHECK,
        "k1_returns_input",
        avg_k1_returns_input,
        "mistake",
        "With one checkpoint I returned it as it is, sharing its tensors.",
    ),
    BlindCase(
        CHECK,
        "int_shared",
        avg_int_not_copied,
        "mistake",
        "I put the newest step counter in the result without cloning it.",
    ),
    BlindCase(
        CHECK,
        "int_from_oldest",
        avg_int_from_oldest,
        "mistake",
        "I kept the integer entries of the first (oldest) checkpoint in the list.",
    ),
    BlindCase(
        CHECK,
        "mean_without_dim",
        avg_mean_without_dim,
        "mistake",
        "I called .mean() on the stacked tensors without dim=0, giving one number.",
    ),
    BlindCase(
        CHECK,
        "unchanged_kept",
        avg_unchanged_kept,
        "mistake",
        "For an entry equal in every checkpoint (or an integer) I kept the newest's "
        "tensor itself, sharing memory with the input.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(dim=0) in the entry's own dtype, in a dict comprehension.",
    ),
    BlindCase(
        CHECK,
        "running_sum_in_own_copies",
        avg_running_sum,
        "correct",
        "Clones the newest checkpoint name by name and adds the others in place into "
        "those clones, then divides in place.",
    ),
    BlindCase(
        CHECK,
        "float64_accumulators_weights",
        avg_float64_accumulators,
        "correct",
        "float64 accumulators with add_(alpha=1/K); an optional weights argument "
        "defaulting to the uniform mean.",
    ),
]
