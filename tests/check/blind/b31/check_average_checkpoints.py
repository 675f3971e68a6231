"""Blind set B31, check_average_checkpoints (chapter 16): checkpoint averaging as readers write it."""

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
            out[name] = sum(s[name] for s in state_dicts).clone()
        else:
            out[name] = t.clone()
    return out


def avg_last_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def avg_skips_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """The accumulator starts at zero and the loop starts at index 1."""
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        acc = torch.zeros_like(t)
        for i in range(1, K):
            acc += state_dicts[i][name]
        out[name] = acc / K
    return out


def avg_step_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Every entry averaged, the integer step counter too."""
    out = {}
    for name in state_dicts[-1]:
        stacked = torch.stack([s[name] for s in state_dicts])
        out[name] = stacked.double().mean(0).to(stacked.dtype)
    return out


def avg_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Summed into the first checkpoint's tensors to save memory."""
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        acc = state_dicts[0][name]
        for s in state_dicts[1:]:
            acc += s[name]
        out[name] = acc / len(state_dicts)
    return out


def avg_float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(s[name].double() for s in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_deepcopy_accumulate(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """deepcopy of the first checkpoint, then += the others (deepcopy keeps tied tensors shared)."""
    out = copy.deepcopy(state_dicts[0])
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] += t
    for name, t in out.items():
        if t.is_floating_point():
            t /= len(state_dicts)
        else:
            out[name] = state_dicts[-1][name].clone()
    return out


def avg_tied_name_dropped(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Each storage averaged once: a second name for the same tensor is skipped."""
    seen = set()
    out = {}
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_k1_returns_input(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """With one checkpoint there is nothing to average, so I returned it."""
    if len(state_dicts) == 1:
        return state_dicts[0]
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()
    return out


def avg_oldest_step(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t.clone()  # the step counter of the first checkpoint
    return out


def avg_step_shared(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """The integer entries are taken over as they are, without a copy."""
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(0)
        else:
            out[name] = t
    return out


def avg_running_pairwise(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """avg = (avg + next) / 2 at every checkpoint: the newest ones weigh more."""
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        avg = state_dicts[0][name].clone()
        for s in state_dicts[1:]:
            avg = (avg + s[name]) / 2
        out[name] = avg
    return out


def avg_keeps_equal_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Like the translator's --average: a tensor equal in all checkpoints is kept as it is."""
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if not t.is_floating_point() or all(torch.equal(s[name], t) for s in state_dicts):
            out[name] = t
        else:
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if torch.is_floating_point(t):
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0).to(t.dtype)
        else:
            out[name] = t.detach().clone()
    return out


def avg_running_mean_float64(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Welford-style running mean in float64: avg += (x - avg) / n."""
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.dtype.is_floating_point:
            out[name] = t.clone()
            continue
        avg = torch.zeros_like(t, dtype=torch.float64)
        for n, s in enumerate(state_dicts, start=1):
            avg += (s[name].double() - avg) / n
        out[name] = avg.to(t.dtype)
    return out


def avg_clone_first_add(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Each name cloned from the oldest checkpoint, the others added with add_, then div_."""
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = t.clone()
            continue
        acc = state_dicts[0][name].clone()
        for s in state_dicts[1:]:
            acc.add_(s[name])
        out[name] = acc.div_(K)
    return out


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
        "newest_only",
        avg_last_only,
        "mistake",
        "I returned a copy of the newest checkpoint: no averaging at all.",
    ),
    BlindCase(
        CHECK,
        "first_checkpoint_skipped",
        avg_skips_first,
        "mistake",
        "Zero accumulator, loop from index 1: the oldest checkpoint is left out of the sum.",
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
        "sum_into_first_checkpoint",
        avg_in_place,
        "mistake",
        "I accumulated with += into the first checkpoint's tensors, changing the input.",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        avg_float64_result,
        "mistake",
        "I summed in float64 for accuracy but forgot to cast back to the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "deepcopy_then_accumulate",
        avg_deepcopy_accumulate,
        "mistake",
        "copy.deepcopy of the first state dict, then += the others: tied names share a tensor.",
    ),
    BlindCase(
        CHECK,
        "tied_name_dropped",
        avg_tied_name_dropped,
        "mistake",
        "To average a shared tensor once I skipped names whose data_ptr I had already seen.",
    ),
    BlindCase(
        CHECK,
        "k1_returns_input",
        avg_k1_returns_input,
        "mistake",
        "For a single checkpoint I returned the input state dict itself.",
    ),
    BlindCase(
        CHECK,
        "oldest_step_counter",
        avg_oldest_step,
        "mistake",
        "I kept the integer step counter of the first (oldest) checkpoint.",
    ),
    BlindCase(
        CHECK,
        "step_counter_not_copied",
        avg_step_shared,
        "mistake",
        "I put the newest checkpoint's step tensor into the result without cloning it.",
    ),
    BlindCase(
        CHECK,
        "pairwise_running_average",
        avg_running_pairwise,
        "mistake",
        "I averaged pairwise, avg = (avg + next) / 2, which weighs the newest checkpoints more.",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept",
        avg_keeps_equal_tensors,
        "mistake",
        "I copied the translator's logic: a tensor equal in all checkpoints is kept, not copied.",
    ),
    BlindCase(
        CHECK,
        "stack_mean",
        avg_stack_mean,
        "correct",
        "torch.stack(...).mean(0) for floating entries, a detached clone for the step counter.",
    ),
    BlindCase(
        CHECK,
        "running_mean_float64",
        avg_running_mean_float64,
        "correct",
        "A running mean avg += (x - avg) / n in float64, cast back to the entry's dtype.",
    ),
    BlindCase(
        CHECK,
        "clone_then_add_",
        avg_clone_first_add,
        "correct",
        "Clone the oldest checkpoint's tensor per name, add_ the others into the clone, div_.",
    ),
]
