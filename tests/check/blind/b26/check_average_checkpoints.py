"""Blind set B26, check_average_checkpoints (chapter 16): checkpoint averaging as readers write
it."""

from __future__ import annotations

from functools import reduce

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def avg_sum_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts)  # the mean of the weights
        else:
            out[name] = t.clone()
    return out


def avg_skips_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            total = torch.zeros_like(t, dtype=torch.float64)
            for i in range(1, K):  # off by one: checkpoint 0 is never added
                total += state_dicts[i][name].double()
            out[name] = (total / K).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_divides_by_k_minus_1(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    n = max(len(state_dicts) - 1, 1)  # the number of steps between the checkpoints
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / n).to(t.dtype)
        else:
            out[name] = t.clone()
    return out


def avg_everything(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        mean = torch.stack([sd[name].double() for sd in state_dicts]).mean(0)
        out[name] = mean.to(t.dtype)  # integers too: the mean step
    return out


def avg_in_place_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = dict(state_dicts[0])
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                avg[name] += t
            else:
                avg[name] = t
    for name, t in avg.items():
        if t.is_floating_point():
            avg[name] = t / len(state_dicts)
        else:
            avg[name] = t.clone()
    return avg


def avg_float64_kept(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def avg_keyed_by_storage(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    sums: dict[int, Tensor] = {}
    names: dict[str, int] = {}
    for sd in state_dicts:
        for name, t in sd.items():
            key = state_dicts[-1][name].data_ptr()  # tied names share one running sum
            names[name] = key
            if t.is_floating_point():
                sums[key] = sums.get(key, torch.zeros_like(t, dtype=torch.float64)) + t.double()
    newest = state_dicts[-1]
    out = {}
    for name, key in names.items():
        t = newest[name]
        out[name] = (sums[key] / len(state_dicts)).to(t.dtype) if key in sums else t.clone()
    return out


def avg_unique_tensors(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    seen = set()
    out = {}
    for name, t in state_dicts[-1].items():
        if t.data_ptr() in seen:
            continue  # a tied weight: already averaged under its first name
        seen.add(t.data_ptr())
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = t.clone()
    return out


def avg_one_returns_input(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    if len(state_dicts) == 1:
        return state_dicts[0]  # nothing to average
    out = {}
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = t.clone()
    return out


def avg_equal_kept(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point() or all(torch.equal(sd[name], t) for sd in state_dicts):
            out[name] = t  # nothing to average: keep it bit for bit
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
    return out


def avg_step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[0].items():
        if t.is_floating_point():
            out[name] = (sum(sd[name].double() for sd in state_dicts) / len(state_dicts)).to(
                t.dtype
            )
        else:
            out[name] = t.clone()  # the first checkpoint's counter
    return out


def avg_float32_only(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, t in state_dicts[-1].items():
        if t.dtype == torch.float32:
            out[name] = sum(sd[name] for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = t.clone()  # an integer step counter
    return out


def avg_running_pairs(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = {name: t.clone() for name, t in state_dicts[0].items()}
    for sd in state_dicts[1:]:
        for name, t in sd.items():
            if t.is_floating_point():
                avg[name] = (avg[name] + t) / 2  # the mean of the mean so far and the next
            else:
                avg[name] = t.clone()
    return avg


def avg_integer_division(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    K = len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        total = sum(sd[name] for sd in state_dicts)
        out[name] = total // K if not t.is_floating_point() else total / K
    return out


# ---------------------------------------------------------------- correct variants


def avg_stack_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """torch.stack and mean in float64 for the floats; the newest integer buffers cloned."""
    newest = state_dicts[-1]
    return {
        name: torch.stack([sd[name] for sd in state_dicts]).double().mean(0).to(t.dtype)
        if t.is_floating_point()
        else t.detach().clone()
        for name, t in newest.items()
    }


def avg_accumulate_in_place(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """A float64 copy of the oldest, the others added in place to the copy, one division."""
    K = len(state_dicts)
    acc = {
        name: t.to(torch.float64, copy=True)
        for name, t in state_dicts[0].items()
        if t.is_floating_point()
    }
    for sd in state_dicts[1:]:
        for name in acc:
            acc[name].add_(sd[name])
    out = {}
    for name, t in state_dicts[-1].items():
        out[name] = acc[name].div_(K).to(t.dtype) if name in acc else t.clone()
    return out


def avg_reduce(
    state_dicts: list[dict[str, Tensor]], dtype: torch.dtype = torch.float64
) -> dict[str, Tensor]:
    """functools.reduce over the checkpoints; the summing dtype an optional argument."""
    newest = state_dicts[-1]
    out = {}
    for name, t in newest.items():
        if torch.is_floating_point(t):
            total = reduce(lambda a, b: a + b, (sd[name].to(dtype) for sd in state_dicts))
            out[name] = (total / float(len(state_dicts))).to(dtype=t.dtype)
        else:
            out[name] = torch.empty_like(t).copy_(t)
    return out


def avg_weighted_sum(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    """Each checkpoint weighted by 1 / K as it is added; integers from the newest."""
    w = 1.0 / len(state_dicts)
    out = {}
    for name, t in state_dicts[-1].items():
        if t.dtype.is_floating_point:
            acc = torch.zeros(t.shape, dtype=torch.float64)
            for sd in state_dicts:
                acc = acc + w * sd[name].double()
            out[name] = acc.to(t.dtype)
        else:
            out[name] = t.clone()
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
        "oldest_checkpoint_skipped",
        avg_skips_oldest,
        "mistake",
        "My loop runs over range(1, K), so the oldest checkpoint is left out but I still "
        "divide by K.",
    ),
    BlindCase(
        CHECK,
        "divided_by_k_minus_1",
        avg_divides_by_k_minus_1,
        "mistake",
        "I divided by K - 1, the number of intervals between the checkpoints.",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        avg_everything,
        "mistake",
        "I averaged every entry, the integer step counter too.",
    ),
    BlindCase(
        CHECK,
        "first_checkpoint_accumulated_in_place",
        avg_in_place_first,
        "mistake",
        "I copied the first dict and added the others into its tensors with +=.",
    ),
    BlindCase(
        CHECK,
        "float64_returned",
        avg_float64_kept,
        "mistake",
        "I summed in float64 for accuracy and forgot to cast back to the weight's dtype.",
    ),
    BlindCase(
        CHECK,
        "sums_keyed_by_storage",
        avg_keyed_by_storage,
        "mistake",
        "I keyed the running sums by data_ptr so that tied names share one result.",
    ),
    BlindCase(
        CHECK,
        "tied_name_skipped",
        avg_unique_tensors,
        "mistake",
        "I skipped a name whose tensor I had already averaged (the tied output weight).",
    ),
    BlindCase(
        CHECK,
        "single_checkpoint_returned_as_is",
        avg_one_returns_input,
        "mistake",
        "With one checkpoint I return the input dict itself: nothing to average.",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept",
        avg_equal_kept,
        "mistake",
        "Like translator/checkpoint.py, a tensor equal in every checkpoint (and every integer) "
        "is kept as it is, the input's own tensor.",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        avg_step_from_oldest,
        "mistake",
        "I iterated over the first checkpoint's entries, so the step counter is the oldest one.",
    ),
    BlindCase(
        CHECK,
        "only_float32_averaged",
        avg_float32_only,
        "mistake",
        "I tested dtype == torch.float32 to find the weights, so other float dtypes are kept "
        "from the newest checkpoint.",
    ),
    BlindCase(
        CHECK,
        "pairwise_running_mean",
        avg_running_pairs,
        "mistake",
        "I averaged the running mean with each next checkpoint, (avg + new) / 2.",
    ),
    BlindCase(
        CHECK,
        "integer_floor_mean",
        avg_integer_division,
        "mistake",
        "Floats divided by K, integer entries by K with // so that they stay integers.",
    ),
    BlindCase(
        CHECK,
        "stack_mean_comprehension",
        avg_stack_mean,
        "correct",
        "One dict comprehension with torch.stack(...).double().mean(0).",
    ),
    BlindCase(
        CHECK,
        "float64_copy_add_in_place",
        avg_accumulate_in_place,
        "correct",
        "A float64 copy of the oldest checkpoint, the others added in place into that copy, "
        "div_ by K.",
    ),
    BlindCase(
        CHECK,
        "functools_reduce",
        avg_reduce,
        "correct",
        "functools.reduce for the sum; the summing dtype an optional argument; integers copied "
        "with empty_like().copy_().",
    ),
    BlindCase(
        CHECK,
        "weighted_sum",
        avg_weighted_sum,
        "correct",
        "Each checkpoint multiplied by 1 / K as it is added, in float64.",
    ),
]
