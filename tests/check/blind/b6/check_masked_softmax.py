"""Blind set B6, check_masked_softmax (chapter 6): the one place a mask becomes -inf."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_polarity_flipped(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    has_key = (~mask).any(-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # a big negative number instead of -inf
    return torch.softmax(scores, dim=-1)


def ms_no_empty_row_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_softmax_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-2, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-2)  # one column per key
    return weights.masked_fill(~has_key, 0.0)


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight exactly 0
    return weights


def ms_zero_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # zero out the masked scores
    return torch.softmax(scores, dim=-1)


def ms_in_place_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores.masked_fill_(~mask, float("-inf"))  # no copy of a big score tensor
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def ms_mask_required(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_float32_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        has_key = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~has_key, 0.0)
        return torch.softmax(scores, dim=-1, dtype=torch.float32).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1, dtype=torch.float32)  # stable in float32 as in AMP


def ms_log_mask_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask.to(scores.dtype).log()  # log 1 = 0, log 0 = -inf: an additive mask
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # empty rows: NaN -> 0


# ---------------------------------------------------------------- correct variants


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Written out: subtract the row's visible max, exp only where visible, divide by the sum."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    visible = scores.masked_fill(~mask, float("-inf"))
    row_max = visible.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    shifted = torch.where(mask, scores - row_max, torch.zeros_like(scores))
    e = torch.where(mask, torch.exp(shifted), torch.zeros_like(scores))
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """log_softmax then exp, with the empty rows given finite scores first; dim as an option."""
    if mask is None:
        return scores.log_softmax(dim).exp()
    anything = mask.any(dim=dim, keepdim=True)
    filled = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    filled = torch.where(anything, filled, torch.zeros_like(filled))
    return torch.where(anything, filled.log_softmax(dim).exp(), torch.zeros_like(filled))


def ms_finfo_min_then_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """The smallest float of the dtype for masked keys, then their weights set to exactly 0."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(filled, dim=-1) * mask  # masked keys (and empty rows) -> 0
    total = weights.sum(dim=-1, keepdim=True)
    return weights / total.clamp_min(torch.finfo(scores.dtype).tiny)


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """-inf fill, plain softmax, and the NaN of rows with no visible key turned into 0."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)


CASES = [
    BlindCase(
        CHECK,
        "polarity_flipped",
        ms_polarity_flipped,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'blocked' like "
        "nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9 instead of -inf, so a row with no visible key "
        "gets uniform weights over the masked keys.",
    ),
    BlindCase(
        CHECK,
        "no_guard_for_empty_rows",
        ms_no_empty_row_guard,
        "mistake",
        "I filled -inf and took the softmax with no special case, so a row with no visible key "
        "comes out NaN.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=-2, so the weights are normalized over the queries.",
    ),
    BlindCase(
        CHECK,
        "zeroed_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I took the plain softmax and multiplied by the mask afterwards, without renormalizing, "
        "so the visible weights no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_set_to_zero",
        ms_zero_scores,
        "mistake",
        "I multiplied the scores by the mask, so masked scores are 0 rather than -inf and still "
        "get weight.",
    ),
    BlindCase(
        CHECK,
        "in_place_fill",
        ms_in_place_fill,
        "mistake",
        "I used masked_fill_ in place on the scores to save memory, which overwrites the "
        "caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "mask_none_crashes",
        ms_mask_required,
        "mistake",
        "I never handled mask=None, so calling it without a mask fails on ~mask.",
    ),
    BlindCase(
        CHECK,
        "always_float32",
        ms_float32_softmax,
        "mistake",
        "I took the softmax with dtype=torch.float32, so float64 scores come back as float32.",
    ),
    BlindCase(
        CHECK,
        "additive_log_mask_nan_to_num",
        ms_log_mask_nan_to_num,
        "mistake",
        "I added log(mask) to the scores (0 or -inf) and turned the NaN of rows with no visible "
        "key into 0 with nan_to_num; the weights are right but those rows' gradient is NaN.",
    ),
    BlindCase(
        CHECK,
        "manual_exp_normalize",
        ms_manual_exp,
        "correct",
        "Written out with torch.where: subtract the largest visible score, exp only the visible "
        "keys, divide by the sum (1 where the sum is 0).",
    ),
    BlindCase(
        CHECK,
        "log_softmax_with_dim_option",
        ms_log_softmax,
        "correct",
        "-inf via torch.where, empty rows given zeros, log_softmax(...).exp(), zeros put back "
        "for empty rows; an extra dim argument defaults to -1.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_then_renormalize",
        ms_finfo_min_then_zero,
        "correct",
        "Masked scores set to the dtype's smallest float, the weights multiplied by the mask "
        "and divided by their sum, clamped away from 0.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after_softmax",
        ms_nan_to_num,
        "correct",
        "-inf fill and a plain softmax; the NaN rows with no visible key become 0 with "
        "nan_to_num (the -inf fill stops their gradient).",
    ),
]
