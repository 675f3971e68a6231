"""Blind set B29, check_masked_softmax (chapter 6): the softmax in which hidden keys weigh 0."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    return scores.masked_fill(~mask, 0.0).softmax(dim=-1)  # a hidden key scores nothing


def ms_fill_lowest_float(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)  # safe in any dtype
    return scores.softmax(dim=-1)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask


def ms_renormalize_nan(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True)


def ms_renormalize_eps(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / (weights.sum(dim=-1, keepdim=True) + 1e-9)  # no 0/0 for empty rows


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return torch.softmax(scores, dim=-2).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-2)


def ms_polarity(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    hide = mask  # True = hide this key
    empty = hide.all(dim=-1, keepdim=True)
    scores = scores.masked_fill(hide, float("-inf")).masked_fill(empty, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)


def ms_index_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores[~mask] = float("-inf")
        empty = torch.isneginf(scores).all(dim=-1, keepdim=True)
        scores[empty.expand_as(scores)] = 0.0
        return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)
    return torch.softmax(scores, dim=-1)


def ms_truthiness(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask:  # no mask given: plain softmax
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1)


def ms_exp_by_hand(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    e = torch.exp(scores)
    if mask is not None:
        e = e * mask
    total = e.sum(dim=-1, keepdim=True)
    return e / total.clamp_min(1e-30)  # rows with nothing visible stay 0


def ms_log_weights(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return torch.log_softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
    return torch.log_softmax(scores, dim=-1)  # log-probabilities are safer


# ---------------------------------------------------------------- correct variants


def ms_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    mask = mask.expand_as(scores)
    any_key = mask.any(-1, keepdim=True)
    hidden = torch.full_like(scores, float("-inf"))
    safe = torch.where(mask, scores, hidden)
    safe = torch.where(any_key, safe, torch.zeros_like(scores))
    return torch.where(any_key, safe.softmax(-1), torch.zeros_like(scores))


def ms_logsumexp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """exp(score - logsumexp of the visible scores); zeros where hidden or nothing is visible."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    visible = mask & torch.ones_like(scores, dtype=torch.bool)  # broadcast to the scores
    any_key = visible.any(-1, keepdim=True)
    filled = scores.masked_fill(~visible, float("-inf")).masked_fill(~any_key, 0.0)
    shifted = filled - filled.amax(dim=-1, keepdim=True).detach()  # largest visible score 0
    lse = torch.logsumexp(shifted, dim=-1, keepdim=True)
    return torch.exp(shifted - lse).masked_fill(~visible | ~any_key, 0.0)


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """-inf for hidden keys, then NaN rows (no visible key) turned into zeros."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)


def ms_stable_ratio(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """By hand: the largest visible score subtracted, hidden keys sent to -inf, exp, and a
    division that leaves an empty row at 0."""
    visible = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)
    top = scores.masked_fill(~visible, float("-inf")).amax(dim=-1, keepdim=True)
    top = top.masked_fill(torch.isinf(top), 0.0).detach()
    e = (scores - top).masked_fill(~visible, float("-inf")).exp()  # exactly 0 when hidden
    total = e.sum(dim=-1, keepdim=True)
    return e / total.masked_fill(total == 0, 1.0)


CASES = [
    BlindCase(
        CHECK,
        "fill_zero",
        ms_fill_zero,
        "mistake",
        "I set the hidden scores to 0, as if a zero score were a zero weight.",
    ),
    BlindCase(
        CHECK,
        "fill_finfo_min",
        ms_fill_lowest_float,
        "mistake",
        "I filled with torch.finfo(dtype).min instead of -inf, so that it works in float16; a "
        "row with no visible key then spreads its weight evenly over the hidden keys.",
    ),
    BlindCase(
        CHECK,
        "no_guard",
        ms_no_guard,
        "mistake",
        "-inf and softmax, with no special case: a row with no visible key comes out NaN.",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the softmax over all keys and then multiplied by the mask, without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "renormalize_nan",
        ms_renormalize_nan,
        "mistake",
        "Softmax, times the mask, divided by the new row sum: an empty row is 0/0 = NaN.",
    ),
    BlindCase(
        CHECK,
        "renormalize_plus_eps",
        ms_renormalize_eps,
        "mistake",
        "Softmax over all keys, times the mask, divided by the row sum + 1e-9; when the hidden "
        "keys have much larger scores the visible weights underflow and the row is lost.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2, down the columns.",
    ),
    BlindCase(
        CHECK,
        "true_means_hide",
        ms_polarity,
        "mistake",
        "I read True in the mask as 'hide this key', PyTorch's key_padding_mask convention.",
    ),
    BlindCase(
        CHECK,
        "boolean_index_in_place",
        ms_index_in_place,
        "mistake",
        "I wrote scores[~mask] = -inf, which changes the caller's scores and fails for a mask "
        "that only broadcasts.",
    ),
    BlindCase(
        CHECK,
        "if_mask_truthiness",
        ms_truthiness,
        "mistake",
        "I tested `if mask:` instead of `if mask is not None:`, which raises for a real mask.",
    ),
    BlindCase(
        CHECK,
        "exp_without_max",
        ms_exp_by_hand,
        "mistake",
        "I wrote the softmax by hand as exp(scores) * mask / sum, without subtracting the "
        "largest score, so large scores overflow to inf and NaN.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_weights,
        "mistake",
        "I returned log_softmax, thinking log-probabilities are safer, instead of the weights.",
    ),
    BlindCase(
        CHECK,
        "torch_where",
        ms_where,
        "correct",
        "torch.where with an explicit -inf tensor; empty rows get zeros through a second where.",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        ms_logsumexp,
        "correct",
        "exp(score - logsumexp over the visible keys), zeros where hidden or the row is empty.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "-inf for hidden keys, softmax, then torch.nan_to_num turns the empty rows into zeros.",
    ),
    BlindCase(
        CHECK,
        "stable_ratio_by_hand",
        ms_stable_ratio,
        "correct",
        "By hand: subtract the largest visible score, -inf for the hidden keys, exp, divide by "
        "the sum (by 1 for an empty row).",
    ),
]
