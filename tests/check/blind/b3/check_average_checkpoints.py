"""Blind cases for check_average_checkpoints (chapter 16), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_average_checkpoints"


# ---------------------------------------------------------------- mistakes


def sum_not_divided(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if tensor.is_floating_point():
            out[name] = sum(sd[name] for sd in state_dicts).to(tensor.dtype)
        else:
            out[name] = tensor.clone()
    return out


def oldest_counted_twice(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {name: t.clone() for name, t in state_dicts[0].items()}  # start from the first ...
    for sd in state_dicts:  # ... and then add all of them, the first one again
        for name, t in sd.items():
            if t.is_floating_point():
                out[name] = out[name] + t
    for name, t in state_dicts[-1].items():
        if t.is_floating_point():
            out[name] = out[name] / len(state_dicts)
        else:
            out[name] = t.clone()
    return out


def step_counter_averaged(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        stacked = torch.stack([sd[name].double() for sd in state_dicts])
        out[name] = stacked.mean(dim=0).to(tensor.dtype)  # every entry, the step counter too
    return out


def accumulate_into_first(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    avg = state_dicts[0]
    for sd in state_dicts[1:]:
        for name in avg:
            if avg[name].is_floating_point():
                avg[name] += sd[name]
    for name in avg:
        if avg[name].is_floating_point():
            avg[name] /= len(state_dicts)
        else:
            avg[name] = state_dicts[-1][name]
    return avg


def float64_result(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = sum(sd[name].double() for sd in state_dicts) / len(state_dicts)
        else:
            out[name] = tensor.clone()
    return out  # summed in float64 for accuracy, but never cast back


def tied_name_skipped(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    seen = set()
    for name, tensor in state_dicts[-1].items():
        if tensor.data_ptr() in seen:  # the tied output weight: already averaged
            continue
        seen.add(tensor.data_ptr())
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


def equal_tensors_kept_as_they_are(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():  # the logic of translator/checkpoint.py
        if not tensor.is_floating_point() or all(
            torch.equal(sd[name], tensor) for sd in state_dicts
        ):
            out[name] = tensor
        else:
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
    return out


def step_from_oldest(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[0].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()  # the step counter of the first checkpoint in the list
    return out


def varargs(*state_dicts: dict[str, Tensor]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(0)
        else:
            out[name] = tensor.clone()
    return out


# ---------------------------------------------------------------- correct variants


def stack_and_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    out = {}
    for name, tensor in state_dicts[-1].items():
        if tensor.is_floating_point():
            out[name] = torch.stack([sd[name] for sd in state_dicts]).mean(dim=0)
        else:
            out[name] = tensor.clone()
    return out


def running_mean(state_dicts: list[dict[str, Tensor]]) -> dict[str, Tensor]:
    newest = state_dicts[-1]
    mean = {n: t.double() for n, t in state_dicts[0].items() if t.is_floating_point()}
    for i, sd in enumerate(state_dicts[1:], start=2):
        for n in mean:
            mean[n] = mean[n] + (sd[n].double() - mean[n]) / i
    return {
        n: mean[n].to(t.dtype) if t.is_floating_point() else t.detach().clone()
        for n, t in newest.items()
    }


def in_place_on_copies(
    state_dicts: list[dict[str, Tensor]], keep_integers_from: int = -1
) -> dict[str, Tensor]:
    k = len(state_dicts)
    out = {}
    for name, tensor in state_dicts[keep_integers_from].items():
        if not torch.is_floating_point(tensor):
            out[name] = tensor.clone()
            continue
        acc = torch.zeros_like(tensor, dtype=torch.float64)
        for sd in state_dicts:
            acc.add_(sd[name])
        out[name] = acc.div_(k).to(tensor.dtype)
    return out


CASES = [
    BlindCase(
        CHECK,
        "sum_not_divided",
        sum_not_divided,
        "mistake",
        "I summed the checkpoints' weights and forgot to divide by K",
    ),
    BlindCase(
        CHECK,
        "oldest_counted_twice",
        oldest_counted_twice,
        "mistake",
        "I started the sum from a copy of the first checkpoint and then looped over all K, "
        "so the oldest is counted twice (K + 1 terms divided by K)",
    ),
    BlindCase(
        CHECK,
        "step_counter_averaged",
        step_counter_averaged,
        "mistake",
        "I averaged every entry, the integer step counter too, instead of keeping the newest "
        "checkpoint's",
    ),
    BlindCase(
        CHECK,
        "accumulate_into_first",
        accumulate_into_first,
        "mistake",
        "I added the other checkpoints into the first state dict with += and divided it in "
        "place: the input is changed, and the tied embedding/output tensor gets everything "
        "added twice",
    ),
    BlindCase(
        CHECK,
        "float64_result",
        float64_result,
        "mistake",
        "I summed in float64 but returned the float64 mean without converting it back to the "
        "weight's own dtype",
    ),
    BlindCase(
        CHECK,
        "tied_name_skipped",
        tied_name_skipped,
        "mistake",
        "I skipped a name whose tensor (data_ptr) I had already averaged, to not count the "
        "tied weight twice, so the tied output name is missing from the result",
    ),
    BlindCase(
        CHECK,
        "equal_tensors_kept_as_they_are",
        equal_tensors_kept_as_they_are,
        "mistake",
        "I copied the translate command's logic: integer entries and tensors equal in every "
        "checkpoint (and everything when K = 1) are returned as the input tensors, shared "
        "with the input",
    ),
    BlindCase(
        CHECK,
        "step_from_oldest",
        step_from_oldest,
        "mistake",
        "I looped over state_dicts[0] and kept its step counter: the oldest checkpoint's step, "
        "not the newest's",
    ),
    BlindCase(
        CHECK,
        "varargs",
        varargs,
        "mistake",
        "my function takes the checkpoints as *state_dicts instead of one list",
    ),
    BlindCase(
        CHECK,
        "stack_and_mean",
        stack_and_mean,
        "correct",
        "torch.stack(...).mean(0) in the weight's own dtype; integers cloned from the newest",
    ),
    BlindCase(
        CHECK,
        "running_mean",
        running_mean,
        "correct",
        "a running mean m += (x - m) / i in float64, converted back at the end",
    ),
    BlindCase(
        CHECK,
        "in_place_on_copies",
        in_place_on_copies,
        "correct",
        "add_ and div_ in place, but on a new float64 zeros tensor; extra argument "
        "keep_integers_from=-1",
    ),
]
