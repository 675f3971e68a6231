"""Blind cases for check_masked_softmax (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import torch

from .. import BlindCase

CHECK = "check_masked_softmax"


def over_the_queries(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-2, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-2)
    return weights.masked_fill(~has_key, 0.0)


def hides_the_visible_keys(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(mask, float("-inf"))
    empty = (~mask).all(dim=-1, keepdim=True)  # rows where I hid everything
    weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1)
    return weights.masked_fill(empty, 0.0)


def minus_1e9_fill(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def minus_inf_no_guard(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def zero_after_softmax(scores, mask=None):
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight 0
    return weights


def mask_times_scores(scores, mask=None):
    if mask is not None:
        scores = scores * mask  # a masked score becomes 0
    return torch.softmax(scores, dim=-1)


def nan_to_num_afterwards(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # a row with no visible key was NaN


def forgot_mask_none(scores, mask=None):
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def padding_mask_unsqueezed(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.unsqueeze(-2)  # (B, T_k) -> (B, 1, T_k), one row for every query
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def where_twice(scores, mask=None):
    if mask is None:
        return scores.softmax(-1)
    mask = mask.expand_as(scores)
    visible_row = mask.any(-1, keepdim=True)
    filled = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    safe = torch.where(visible_row, filled, torch.zeros_like(scores))
    return torch.where(visible_row, safe.softmax(-1), torch.zeros_like(scores))


def dtype_min_fill(scores, mask=None, dim=-1):
    if mask is None:
        return torch.softmax(scores, dim=dim)
    lowest = torch.finfo(scores.dtype).min
    weights = torch.softmax(scores.masked_fill(mask.logical_not(), lowest), dim=dim)
    weights = weights * mask  # masked keys exactly 0
    return weights * mask.any(dim=dim, keepdim=True)  # rows with no visible key: all 0


def exp_by_hand(scores, mask=None):
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    filled = scores.masked_fill(~mask, float("-inf"))
    row_max = filled.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(filled - row_max.detach())
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


CASES = [
    BlindCase(
        CHECK,
        "over_the_queries",
        over_the_queries,
        "mistake",
        "I took the softmax over dim=-2, the queries, instead of the last axis (the keys)",
    ),
    BlindCase(
        CHECK,
        "hides_the_visible_keys",
        hides_the_visible_keys,
        "mistake",
        "I filled -inf where the mask is True, the opposite polarity (True should mean visible)",
    ),
    BlindCase(
        CHECK,
        "minus_1e9_fill",
        minus_1e9_fill,
        "mistake",
        "I filled the masked scores with -1e9 instead of -inf and did nothing for a row with no "
        "visible key, so its weight is spread evenly over the masked keys",
    ),
    BlindCase(
        CHECK,
        "minus_inf_no_guard",
        minus_inf_no_guard,
        "mistake",
        "I filled with -inf but forgot the guard, so a row with no visible key gives NaN",
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        zero_after_softmax,
        "mistake",
        "I took the plain softmax and multiplied the weights by the mask afterwards, without "
        "renormalizing, so rows no longer sum to 1",
    ),
    BlindCase(
        CHECK,
        "mask_times_scores",
        mask_times_scores,
        "mistake",
        "I multiplied the scores by the mask before the softmax, so masked keys get score 0 "
        "(weight e^0), not weight 0",
    ),
    BlindCase(
        CHECK,
        "forgot_mask_none",
        forgot_mask_none,
        "mistake",
        "I did not handle mask=None: ~mask fails when no mask is given",
    ),
    BlindCase(
        CHECK,
        "padding_mask_unsqueezed",
        padding_mask_unsqueezed,
        "mistake",
        "I always inserted a query axis with mask.unsqueeze(-2), as if the mask were a (B, T_k) "
        "padding mask, which breaks masks already shaped (..., T_q, T_k)",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_afterwards",
        nan_to_num_afterwards,
        "correct",
        "I filled with -inf and turned the NaN of a row with no visible key into 0 with "
        "nan_to_num after the softmax (masked_fill already gives those scores zero gradient)",
    ),
    BlindCase(
        CHECK,
        "where_twice",
        where_twice,
        "correct",
        "torch.where instead of masked_fill, for both the -inf and the empty-row guard",
    ),
    BlindCase(
        CHECK,
        "dtype_min_fill",
        dtype_min_fill,
        "correct",
        "I filled with the dtype's lowest finite number, then multiplied by the mask and by "
        "'row has a visible key'; an extra dim argument defaults to -1",
    ),
    BlindCase(
        CHECK,
        "exp_by_hand",
        exp_by_hand,
        "correct",
        "softmax written by hand: subtract the row max (0 for an empty row), exp, divide by "
        "the sum (or by 1 where the sum is 0)",
    ),
]
