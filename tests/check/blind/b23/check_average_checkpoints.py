"""Blind set B23, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
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
            out[name] = sum(sd[name] for sd in state_dicts)  # forgot / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    # I thought the newest checkpoint already is the settled model
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_running_pairwise(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.clone() for name, t in state_dicts[0].items()}
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] = (out[name] + t) / 2  # a running mean of pairs, not of all K
            else:
                out[name] = t.clone()
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    used = state_dicts[1:] if len(state_dicts) > 1 else state_dicts  # off by one: K - 1 of them
    out = {}
    for name, tensor in newest.items():
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in used]).mean(dim=0)
        else:
            out[name] = tensor.clone()
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([sd[name].double() for sd in state_dicts])
        out[name] = stacked.mean(0).to(state_dicts[-1][name].dtype)  # the step counter too
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            acc = tensor  # the oldest checkpoint's own tensor ...
            for sd in state_dicts[1:]:
                acc += sd[name]  # ... summed into in place
            out[name] = acc / len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)  # no cast
        else:
            out[name] = tensor.clone()
    return out


def avg_deepcopy_tied_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = copy.deepcopy(state_dicts[0])  # deepcopy keeps tied names as one tensor
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


def avg_dedupe_drops_tied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out, seen = {}, set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:
            continue  # a tied weight: already averaged under its first name
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_int_not_copied(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = tensor  # the newest step counter, the same tensor object
    return out


def avg_single_shortcut(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return dict(state_dicts[0])  # nothing to average: the input's tensors as they are
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()  # the oldest checkpoint's step, not the newest's
    return out


def avg_mean_without_dim(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean()  # no dim=0
        else:
            out[name] = tensor.clone()
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack(...).mean(0) in the tensor's own dtype; integers copied from the newest."""
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if torch.is_floating_point(tensor):
            out[name] = torch.stack([sd[name] for sd in state_dicts], dim=0).mean(dim=0)
        else:
            out[name] = tensor.detach().clone()
    return out


def avg_incremental_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A running mean, mean += (x - mean) / n, on a float64 copy of the oldest checkpoint."""
    out = {}
    for name, tensor in state_dicts[-1].items():
        if not tensor.is_floating_point():
            out[name] = tensor.clone()
            continue
        mean = state_dicts[0][name].to(torch.float64, copy=True)
        for n, sd in enumerate(state_dicts[1:], start=2):
            mean.add_((sd[name].double() - mean) / n)
        out[name] = mean.to(tensor.dtype)
    return out


def avg_keeps_ties(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Tied names get one averaged tensor, shared between them as in the model."""
    done: dict[int, Tensor] = {}
    out = {}
    for name, tensor in state_dicts[-1].items():
        key = tensor.data_ptr()
        if key in done:
            out[name] = done[key]
            continue
        if tensor.dtype.is_floating_point:
            total = torch.zeros_like(tensor, dtype=torch.float64)
            for sd in state_dicts:
                total += sd[name]
            out[name] = (total / len(state_dicts)).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
        done[key] = out[name]
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        avg_sum_only,
        "mistake",
        "I summed the checkpoints and forgot to divide by K",
    ),
    BlindCase(
        CHECK,
        "newest_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint alone",
    ),
    BlindCase(
        CHECK,
        "pairwise_running_mean",
        avg_running_pairwise,
        "mistake",
        "avg = (avg + x) / 2 for each later checkpoint: the newest ones weigh more",
    ),
    BlindCase(
        CHECK,
        "oldest_left_out",
        avg_skips_oldest,
        "mistake",
        "I averaged state_dicts[1:], so only K - 1 checkpoints count",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_step_averaged,
        "mistake",
        "every entry averaged, the integer step counter too",
    ),
    BlindCase(
        CHECK,
        "oldest_summed_in_place",
        avg_in_place,
        "mistake",
        "acc = the oldest's tensor, then acc += ...: the first checkpoint is overwritten",
    ),
    BlindCase(
        CHECK,
        "float64_returned",
        avg_float64_result,
        "mistake",
        "I summed in float64 and forgot to cast the mean back to the tensor's dtype",
    ),
    BlindCase(
        CHECK,
        "deepcopy_tied_added_twice",
        avg_deepcopy_tied_twice,
        "mistake",
        "deepcopy of the oldest, then += per name: a tied tensor is added (and divided) twice",
    ),
    BlindCase(
        CHECK,
        "tied_name_skipped",
        avg_dedupe_drops_tied,
        "mistake",
        "I skipped a name whose tensor I had already seen (data_ptr): the tied name is missing",
    ),
    BlindCase(
        CHECK,
        "step_counter_shared",
        avg_int_not_copied,
        "mistake",
        "the integer step counter is the newest checkpoint's own tensor, not a copy",
    ),
    BlindCase(
        CHECK,
        "single_checkpoint_returned_as_is",
        avg_single_shortcut,
        "mistake",
        "for K = 1 I returned dict(state_dicts[0]): the input's tensors themselves",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "the step counter is copied from the oldest checkpoint instead of the newest",
    ),
    BlindCase(
        CHECK,
        "mean_without_dim",
        avg_mean_without_dim,
        "mistake",
        "torch.stack(...).mean() without dim=0: one number per entry",
    ),
    BlindCase(
        CHECK,
        "stack_mean_float32",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(dim=0) in the weight's own dtype, no float64",
    ),
    BlindCase(
        CHECK,
        "incremental_mean",
        avg_incremental_mean,
        "correct",
        "a running mean, mean += (x - mean) / n, on a float64 copy, cast back at the end",
    ),
    BlindCase(
        CHECK,
        "ties_kept_in_output",
        avg_keeps_ties,
        "correct",
        "tied names get one averaged tensor, shared between the two names as in the model",
    ),
]
