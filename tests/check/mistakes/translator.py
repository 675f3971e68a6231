"""The translator's mistakes: checkpoint averaging (chapter 16)."""

from __future__ import annotations

import copy

import torch

from transformer_tutorial import check

from . import Correct, Mistake

# --- right implementations, written three ways ------------------------------------------------


def average_by_stack(state_dicts):
    """The mean of each floating-point entry; integer entries as the newest checkpoint has them."""
    newest = state_dicts[-1]
    out = {}
    for name, tensor in newest.items():
        if tensor.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).mean(dim=0)
        else:
            out[name] = tensor.clone()
    return out


def average_by_running_sum(state_dicts):
    """Sum into fresh tensors, then divide once."""
    K = len(state_dicts)
    out = {name: t.clone() for name, t in state_dicts[0].items()}  # clone unties: one per name
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] += t
            else:
                out[name] = t.clone()
    for t in out.values():
        if t.is_floating_point():
            t /= K
    return out


def average_by_running_mean(state_dicts):
    """The incremental mean m_k = m_{k-1} + (x_k - m_{k-1}) / k, one checkpoint at a time."""
    out = {}
    for k, s in enumerate(state_dicts, start=1):
        for name, t in s.items():
            if not t.is_floating_point():
                out[name] = t.clone()
            elif k == 1:
                out[name] = t.clone()
            else:
                out[name] = out[name] + (t - out[name]) / k
    return out


# --- the mistakes ----------------------------------------------------------------------------


def sum_without_dividing(state_dicts):
    out = average_by_stack(state_dicts)
    for name, t in out.items():
        if t.is_floating_point():
            out[name] = torch.stack([s[name] for s in state_dicts]).sum(dim=0)
    return out


def last_only(state_dicts):
    return {name: t.clone() for name, t in state_dicts[-1].items()}


def off_by_one_skips_first(state_dicts):
    return average_by_stack(state_dicts[1:])


def divides_by_k_minus_1(state_dicts):
    K = len(state_dicts)
    out = sum_without_dividing(state_dicts)
    return {n: t / max(K - 1, 1) if t.is_floating_point() else t for n, t in out.items()}


def everything_as_floats(state_dicts):
    return {
        name: torch.stack([s[name].float() for s in state_dicts]).mean(dim=0)
        for name in state_dicts[-1]
    }


def counter_averaged_as_integer(state_dicts):
    out = average_by_stack(state_dicts)
    for name, t in state_dicts[-1].items():
        if not t.is_floating_point():
            out[name] = sum(s[name] for s in state_dicts) // len(state_dicts)
    return out


def mean_over_everything(state_dicts):
    """torch.mean on the step counter raises: the checker names it."""
    return {name: torch.stack([s[name] for s in state_dicts]).mean(0) for name in state_dicts[-1]}


def accumulates_into_the_first(state_dicts):
    out = state_dicts[0]  # not a copy: the first checkpoint itself
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point() and name != "generator.weight":
                out[name] += t
    for name, t in out.items():
        if t.is_floating_point() and name != "generator.weight":
            t /= len(state_dicts)
    return out


def float64_result(state_dicts):
    out = average_by_stack(state_dicts)
    return {n: t.double() if t.is_floating_point() else t for n, t in out.items()}


def deepcopy_keeps_the_tie(state_dicts):
    out = copy.deepcopy(state_dicts[0])  # deepcopy keeps the two tied names on one tensor
    for s in state_dicts[1:]:
        for name, t in s.items():
            if t.is_floating_point():
                out[name] += t
            else:
                out[name] = t.clone()
    for t in out.values():
        if t.is_floating_point():
            t /= len(state_dicts)
    return out


def drops_the_tied_name(state_dicts):
    out, seen = {}, set()
    for name, t in average_by_stack(state_dicts).items():
        ptr = state_dicts[-1][name].untyped_storage().data_ptr()
        if ptr not in seen:  # "the same tensor twice": skipped, as named_parameters() does
            out[name] = t
            seen.add(ptr)
    return out


def returns_views_of_the_inputs(state_dicts):
    """Keeps every entry that is equal in all checkpoints by reference (and for K = 1, all)."""
    out = average_by_stack(state_dicts)
    for name, t in state_dicts[-1].items():
        if all(torch.equal(s[name], t) for s in state_dicts):
            out[name] = t
    return out


C = check.check_average_checkpoints

MISTAKES = [
    Mistake(C, "average-sum-without-dividing", sum_without_dividing, "without dividing by K"),
    Mistake(C, "average-last-only", last_only, "you return the last checkpoint's weights"),
    Mistake(
        C,
        "average-off-by-one-first-left-out",
        off_by_one_skips_first,
        "off by one: the first one is left out",
    ),
    Mistake(C, "average-divides-by-k-minus-1", divides_by_k_minus_1, "you divide the sum by K - 1"),
    Mistake(C, "average-integer-buffer-as-float", everything_as_floats, "averaged as floats"),
    Mistake(
        C,
        "average-integer-buffer-averaged",
        counter_averaged_as_integer,
        "neither averaged, summed, nor taken from an older checkpoint",
    ),
    Mistake(
        C,
        "average-torch-mean-on-integers",
        mean_over_everything,
        "torch.mean does not take integers",
    ),
    Mistake(
        C,
        "average-mutates-its-inputs",
        accumulates_into_the_first,
        "changed the checkpoints it was given, in place",
    ),
    Mistake(C, "average-float64-from-float32", float64_result, "must keep the weights' dtype"),
    Mistake(C, "average-deepcopy-keeps-tie", deepcopy_keeps_the_tie, "the tied weights"),
    Mistake(C, "average-drops-tied-name", drops_the_tied_name, "two tied names share one tensor"),
    Mistake(C, "average-views-of-inputs", returns_views_of_the_inputs, "share memory"),
]

CORRECT = [
    Correct(C, "average-by-stack", average_by_stack),
    Correct(C, "average-by-running-sum", average_by_running_sum),
    Correct(C, "average-by-running-mean", average_by_running_mean),
]
