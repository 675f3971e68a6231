"""Blind set B16, check_masked_softmax (chapter 6): the softmax that gives masked keys weight 0,
as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # a large negative number, no NaN ever
    return torch.softmax(scores, dim=-1)


def ms_nan_for_empty_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_polarity_inverted(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    hidden = mask  # True = padding, hide it
    empty = hidden.all(dim=-1, keepdim=True)
    scores = scores.masked_fill(hidden, float("-inf")).masked_fill(empty, 0.0)
    return scores.softmax(-1).masked_fill(empty, 0.0)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.nan_to_num(torch.softmax(scores, dim=-2)).masked_fill(~has_key, 0.0)


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight 0
    return weights


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # no score for the padding
    return torch.softmax(scores, dim=-1)


def ms_mask_required(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1) * has_key


def ms_fills_scores_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy of a possibly big tensor
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_no_keepdim(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1)  # (..., T_q): does the query see anything?
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_mask_added(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask  # the notes add the mask matrix to Q K^T
    return torch.softmax(scores, dim=-1)


# ---------------------------------------------------------------- correct variants


def ms_where_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # NaN if empty
    has_key = mask.any(dim=-1, keepdim=True)
    return torch.where(has_key, weights, torch.zeros_like(weights))  # replace the NaN rows


def ms_renormalized_product(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    kept = weights * mask
    return kept / kept.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def ms_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """The dtype's lowest finite value as the fill; empty rows zeroed afterwards."""
    if mask is None:
        return scores.softmax(dim=-1)
    lowest = torch.finfo(scores.dtype).min
    weights = scores.masked_fill(mask.logical_not(), lowest).softmax(dim=-1)
    return weights * mask.any(dim=-1, keepdim=True)


def ms_exp_by_hand(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    safe = torch.where(mask, scores, torch.zeros_like(scores))
    top = safe.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(safe - top) * mask
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_safe_rows_then_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.nn.functional.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    visible = mask | ~has_key  # an empty row sees every key, and is zeroed below
    weights = torch.softmax(torch.where(visible, scores, float("-inf")), dim=-1)
    weights = weights.clone()
    weights.mul_(has_key)  # in place on our own copy
    return weights


CASES = [
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a query with no visible key spreads its "
        "weight evenly over the masked keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_query_without_keys",
        ms_nan_for_empty_rows,
        "mistake",
        "I filled with -inf and called softmax, so a row with no visible key is NaN.",
    ),
    BlindCase(
        CHECK,
        "polarity_inverted",
        ms_polarity_inverted,
        "mistake",
        "I read True in the mask as 'padding, hide it', like nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_over_queries,
        "mistake",
        "I normalized over dim=-2 (the queries) instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "zeroed_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I took the softmax of all scores and then multiplied by the mask, so the visible "
        "weights no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "fill_with_zero",
        ms_fill_zero,
        "mistake",
        "I set the masked scores to 0, but exp(0) = 1, so masked keys still get weight.",
    ),
    BlindCase(
        CHECK,
        "mask_none_not_handled",
        ms_mask_required,
        "mistake",
        "My code always uses the mask, so calling it with mask=None fails.",
    ),
    BlindCase(
        CHECK,
        "scores_filled_in_place",
        ms_fills_scores_in_place,
        "mistake",
        "I used masked_fill_ on the scores I was given, which overwrites the caller's tensor "
        "(and fails on a leaf that requires grad).",
    ),
    BlindCase(
        CHECK,
        "has_key_without_keepdim",
        ms_no_keepdim,
        "mistake",
        "I computed the rows with a visible key as mask.any(dim=-1) without keepdim=True, so it "
        "lines up with the wrong axes of the scores.",
    ),
    BlindCase(
        CHECK,
        "mask_added_to_scores",
        ms_mask_added,
        "mistake",
        "I added the mask to the scores, as the notes add their mask matrix to Q K^T; a "
        "boolean mask only adds 1 to the visible scores.",
    ),
    BlindCase(
        CHECK,
        "renormalized_product",
        ms_renormalized_product,
        "correct",
        "Softmax, times the mask, divided by the row sum (clamped so an empty row stays 0).",
    ),
    BlindCase(
        CHECK,
        "where_after_softmax",
        ms_where_after_softmax,
        "correct",
        "Plain -inf fill and softmax, then torch.where puts zeros in the rows with no visible "
        "key (their gradient is zero too, since masked_fill passes none back).",
    ),
    BlindCase(
        CHECK,
        "finfo_min_fill",
        ms_finfo_min,
        "correct",
        "Fills with torch.finfo(dtype).min instead of -inf, then multiplies empty rows by 0.",
    ),
    BlindCase(
        CHECK,
        "exp_by_hand",
        ms_exp_by_hand,
        "correct",
        "exp(score - row max) times the mask over its sum, written out; None means all True.",
    ),
    BlindCase(
        CHECK,
        "empty_rows_see_all_then_zeroed",
        ms_safe_rows_then_zero,
        "correct",
        "An empty row is let see every key, then multiplied by 0 in place on a clone.",
    ),
]
