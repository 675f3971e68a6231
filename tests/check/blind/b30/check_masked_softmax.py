"""Blind set B30, check_masked_softmax (chapter 6): the softmax that gives masked keys weight 0,
as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return scores.softmax(dim=-1)


def ms_true_is_blocked(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    has_key = (~mask).any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-2))


def ms_nan_for_empty_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # every row has some key, surely


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask  # zero out the masked keys


def ms_zero_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return torch.softmax(scores, dim=-1)


def ms_in_place_on_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_boolean_indexing(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.clone()
    if mask is not None:
        scores[~mask] = float("-inf")  # the mask must pick cells of scores
        empty = torch.isinf(scores).all(-1, keepdim=True)
        return torch.softmax(scores.masked_fill(empty, 0.0), -1).masked_fill(empty, 0.0)
    return torch.softmax(scores, -1)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return F.log_softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return F.log_softmax(scores, dim=-1).masked_fill(~has_key, 0.0)  # log is more stable


def ms_exp_over_sum(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    e = torch.exp(scores)
    if mask is not None:
        e = e * mask
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)


def ms_mask_required(scores: Tensor, mask: Tensor) -> Tensor:
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)  # 0/0 rows become 0


def ms_renormalised_product(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """exp(scores - max) kept only where visible, divided by the visible sum (at least tiny)."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    top = scores.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True).detach()
    shifted = scores - top.masked_fill(top.isinf(), 0.0)
    e = torch.exp(shifted.masked_fill(~mask, 0.0)) * mask
    return e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)


def ms_where_logsumexp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    visible = mask.expand_as(scores)
    safe = torch.where(visible, scores, torch.zeros_like(scores))
    neg_inf = torch.full_like(scores, float("-inf"))
    lse = torch.logsumexp(torch.where(visible, safe, neg_inf), dim=-1, keepdim=True)
    lse = torch.where(torch.isinf(lse), torch.zeros_like(lse), lse)
    return torch.where(visible, torch.exp(safe - lse), torch.zeros_like(scores))


def ms_finfo_min_then_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """The dtype's lowest value as the fill, then masked cells and empty rows set to exactly 0."""
    if mask is None:
        return F.softmax(scores, dim=-1)
    low = torch.finfo(scores.dtype).min
    weights = F.softmax(scores.masked_fill(~mask, low), dim=-1)
    weights = weights.masked_fill(~mask, 0.0)
    return weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)


CASES = [
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled with -1e9 instead of -inf, so a row with no visible key becomes uniform.",
    ),
    BlindCase(
        CHECK,
        "true_means_blocked",
        ms_true_is_blocked,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'hide this key'.",
    ),
    BlindCase(
        CHECK,
        "softmax_down_the_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax along dim=-2, so each key's column sums to 1.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        ms_nan_for_empty_rows,
        "mistake",
        "I filled -inf and took the softmax, forgetting rows with no visible key (NaN).",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the plain softmax and multiplied by the mask, so the visible weights no "
        "longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        ms_zero_fill,
        "mistake",
        "I multiplied the scores by the mask, which makes masked scores 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "fills_callers_scores",
        ms_in_place_on_scores,
        "mistake",
        "I used masked_fill_ on scores to save a copy, which overwrites the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "boolean_indexing",
        ms_boolean_indexing,
        "mistake",
        "I wrote scores[~mask] = -inf, which only works when the mask has the scores' full "
        "shape, not a broadcastable one.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I returned log_softmax because it is more stable, so I give log-weights.",
    ),
    BlindCase(
        CHECK,
        "exp_over_sum_unstable",
        ms_exp_over_sum,
        "mistake",
        "I wrote exp(scores) * mask / sum by hand without subtracting the max, which overflows "
        "for large scores.",
    ),
    BlindCase(
        CHECK,
        "mask_without_default",
        ms_mask_required,
        "mistake",
        "My mask argument has no default, so calling it without a mask fails.",
    ),
    BlindCase(
        CHECK,
        "renormalised_product",
        ms_renormalised_product,
        "correct",
        "exp of the max-shifted scores times the mask, divided by the visible sum clamped "
        "away from 0.",
    ),
    BlindCase(
        CHECK,
        "where_logsumexp",
        ms_where_logsumexp,
        "correct",
        "torch.where and logsumexp over the visible keys; empty rows give 0.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_then_zero",
        ms_finfo_min_then_zero,
        "correct",
        "The dtype's lowest finite value as the fill, then the masked cells and empty rows "
        "set to exactly 0.",
    ),
    BlindCase(
        CHECK,
        "where_then_nan_to_num",
        ms_nan_to_num_after,
        "correct",
        "-inf put in with torch.where, and the NaN of rows with no visible key turned into 0 "
        "with nan_to_num after the softmax.",
    ),
]
