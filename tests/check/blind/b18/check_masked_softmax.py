"""Blind set B18, check_masked_softmax (chapter 6): the softmax over visible keys as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_true_blocks(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    scores = scores.masked_fill(mask, float("-inf"))  # hide what the mask marks
    has_key = (~mask).any(dim=-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # large negative, no NaN
    return F.softmax(scores, dim=-1)


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # zero out the padded scores
    return torch.softmax(scores, dim=-1)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(scores.softmax(dim=-2), nan=0.0)


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # zero weight on the masked keys
    return weights


def ms_renormalize_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True)  # rows sum to 1 again


def ms_float32_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        weights = torch.softmax(scores, dim=-1, dtype=torch.float32)  # stable in float32
        return weights.masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1, dtype=torch.float32)


def ms_fills_input_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # in place, saves a copy
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_zero_rows_any_masked(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    full = mask.all(dim=-1, keepdim=True)  # rows that can attend
    weights = torch.softmax(scores.masked_fill(~full, 0.0), dim=-1)
    return weights.masked_fill(~full, 0.0)


def ms_times_minus_inf(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + (~mask) * float("-inf")  # -inf where masked, + 0 elsewhere
    return torch.softmax(scores, dim=-1)


# ---------------------------------------------------------------- correct variants


def ms_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """torch.where for the fill and for the rows with no visible key."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.expand_as(scores)
    neg_inf = torch.full_like(scores, float("-inf"))
    visible = mask.any(dim=-1, keepdim=True)
    safe = torch.where(visible, torch.where(mask, scores, neg_inf), torch.zeros_like(scores))
    weights = torch.softmax(safe, dim=-1)
    return torch.where(visible, weights, torch.zeros_like(weights))


def ms_exp_by_hand(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """exp of the scores minus the largest visible one (masked ones -inf), over the row sum
    (at least 1, so an empty row stays 0); an extra dim argument."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    visible = scores.masked_fill(~mask, float("-inf"))
    top = visible.amax(dim=dim, keepdim=True).detach()
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)  # empty rows: shift by 0
    e = torch.exp(visible - top)  # exactly 0 at the masked keys
    return e / e.sum(dim=dim, keepdim=True).clamp_min(1.0)


def ms_additive_bias(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """An additive float mask (0 or -inf), as nn.Transformer builds it, then the guard."""
    if mask is None:
        return F.softmax(scores, dim=-1)
    bias = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(~mask, float("-inf"))
    empty = ~mask.any(-1, keepdim=True)
    logits = (scores + bias).masked_fill(empty, 0.0)
    return F.softmax(logits, dim=-1) * ~empty


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """-inf fill, plain softmax, then nan_to_num turns the 0/0 of an empty row into zeros."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


CASES = [
    BlindCase(
        CHECK,
        "true_blocks",
        ms_true_blocks,
        "mistake",
        "I read the mask as True = blocked (nn.MultiheadAttention's polarity).",
    ),
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
        "fill_zero",
        ms_fill_zero,
        "mistake",
        "I set the masked scores to 0 instead of -inf, so masked keys still get weight.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2, the queries.",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the plain softmax and multiplied by the mask afterwards, so rows no longer sum "
        "to 1.",
    ),
    BlindCase(
        CHECK,
        "renormalize_without_guard",
        ms_renormalize_no_guard,
        "mistake",
        "I multiplied by the mask after the softmax and divided by the new row sums; a row with "
        "no visible key becomes 0/0 = NaN.",
    ),
    BlindCase(
        CHECK,
        "float32_softmax",
        ms_float32_softmax,
        "mistake",
        "I asked softmax for dtype=torch.float32 to be safe, so float64 scores come back as "
        "float32.",
    ),
    BlindCase(
        CHECK,
        "fills_scores_in_place",
        ms_fills_input_in_place,
        "mistake",
        "I used masked_fill_ on the scores I was given, which changes the caller's tensor (or "
        "fails on one that requires grad).",
    ),
    BlindCase(
        CHECK,
        "zeroes_rows_with_any_masked_key",
        ms_zero_rows_any_masked,
        "mistake",
        "For the empty-row guard I used mask.all instead of mask.any, so every row with a "
        "masked key gets zeros.",
    ),
    BlindCase(
        CHECK,
        "times_minus_inf",
        ms_times_minus_inf,
        "mistake",
        "I added (~mask) * -inf to the scores; 0 * -inf is NaN, so the visible keys get NaN.",
    ),
    BlindCase(
        CHECK,
        "torch_where",
        ms_where,
        "correct",
        "torch.where for the -inf fill and for the rows with no visible key.",
    ),
    BlindCase(
        CHECK,
        "exp_by_hand",
        ms_exp_by_hand,
        "correct",
        "exp of the scores shifted by the largest visible one (masked ones -inf), over the row "
        "sum clamped at 1; an extra dim argument.",
    ),
    BlindCase(
        CHECK,
        "additive_float_mask",
        ms_additive_bias,
        "correct",
        "An additive 0 / -inf float mask, empty rows set to 0 before and after the softmax.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "-inf fill and a plain softmax, then torch.nan_to_num for the rows with no visible key "
        "(masked_fill's backward keeps their gradient at zero).",
    ),
]
