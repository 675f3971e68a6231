"""Blind set B19, check_masked_softmax (chapter 6): the softmax that gives masked keys weight 0."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_inverted(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    empty = torch.isinf(scores).all(-1, keepdim=True)
    return scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # a large negative number, never NaN
    return torch.softmax(scores, dim=-1)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # an all-masked row is NaN


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(scores.softmax(dim=-2))


def ms_zero_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get 0
    return weights


def ms_renormalize(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights.masked_fill(~mask, 0.0)
    return weights / weights.sum(-1, keepdim=True)  # rows sum to 1 again


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # masked scores switched off
    return scores.softmax(dim=-1)


def ms_ignores_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    return torch.softmax(scores, dim=-1)


def ms_additive_bool(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask  # an additive mask, as in nn.Transformer
    return torch.softmax(scores, dim=-1)


def ms_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    scores.masked_fill_(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- correct variants


def ms_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """torch.where with -inf, the empty rows found after the fill."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    empty = torch.isneginf(filled).all(dim=-1, keepdim=True)
    safe = torch.where(empty, torch.zeros_like(filled), filled)
    return torch.where(empty, torch.zeros_like(filled), safe.softmax(-1))


def ms_exp_by_hand(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """exp of the max-shifted scores times the mask, divided by the sum (at least a tiny)."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    shifted = scores - scores.amax(dim=-1, keepdim=True).detach()
    e = torch.exp(shifted) * mask
    total = e.sum(dim=-1, keepdim=True)
    return e / total.clamp_min(torch.finfo(scores.dtype).tiny)


def ms_min_fill_then_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Fill with the dtype's lowest value, then zero the masked weights exactly."""
    if mask is None:
        return scores.softmax(dim=-1)
    mask = mask.expand_as(scores)
    w = scores.masked_fill(~mask, torch.finfo(scores.dtype).min).softmax(dim=-1)
    return w.masked_fill(~mask, 0.0)  # an empty row: uniform, then all zero


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # all-masked rows -> 0


CASES = [
    BlindCase(
        CHECK,
        "mask_inverted",
        ms_inverted,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'blocked'.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled with -1e9 to avoid NaN, so a row with no visible key becomes uniform.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        ms_no_guard,
        "mistake",
        "I filled -inf and took the softmax, with nothing for a row that has no visible key.",
    ),
    BlindCase(
        CHECK, "softmax_over_queries", ms_over_queries, "mistake", "I took the softmax over dim=-2."
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        ms_zero_after,
        "mistake",
        "I took the softmax first and multiplied by the mask, so rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "renormalize_after",
        ms_renormalize,
        "mistake",
        "I zeroed the masked weights after the softmax and divided by the row sum, which is 0/0 "
        "for a row with no visible key.",
    ),
    BlindCase(
        CHECK,
        "fill_zero",
        ms_fill_zero,
        "mistake",
        "I set the masked scores to 0 instead of -inf.",
    ),
    BlindCase(CHECK, "mask_ignored", ms_ignores_mask, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "additive_bool_mask",
        ms_additive_bool,
        "mistake",
        "I added the mask to the scores, as an additive attention mask.",
    ),
    BlindCase(
        CHECK,
        "in_place_fill",
        ms_in_place,
        "mistake",
        "I used masked_fill_ in place on the scores to save memory, which changes the caller's "
        "tensor.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after",
        ms_nan_to_num,
        "correct",
        "Empty rows become NaN in the softmax and are set to 0 by nan_to_num; masked_fill "
        "already gives their scores a zero gradient.",
    ),
    BlindCase(
        CHECK,
        "where_neginf",
        ms_where,
        "correct",
        "torch.where instead of masked_fill; empty rows found with isneginf after the fill.",
    ),
    BlindCase(
        CHECK,
        "exp_by_hand",
        ms_exp_by_hand,
        "correct",
        "exp of the shifted scores, multiplied by the mask, divided by the clamped row sum.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_then_zero",
        ms_min_fill_then_zero,
        "correct",
        "Fill with finfo.min, softmax, then zero the masked weights.",
    ),
]
