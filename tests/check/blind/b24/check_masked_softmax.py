"""Blind set B24, check_masked_softmax (chapter 6): the masked softmax as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_mask_inverted(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    has_key = (~mask).any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # a large negative number, no NaN possible
    return torch.softmax(scores, dim=-1)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-2).masked_fill(~mask, 0.0)


def ms_nan_for_empty_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # drop the masked keys
    return weights


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # masked scores set to zero
    return torch.softmax(scores, dim=-1)


def ms_fill_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores.masked_fill_(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_guard_wrong_axis(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-2, keepdim=True)
    scores = scores.masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_scaled_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores / math.sqrt(scores.shape[-1])  # the softmax temperature
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_if_mask_truthiness(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if not mask:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_additive_bias_then_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    bias = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores + bias, dim=-1)  # an additive mask, as in nn.Transformer
    has_key = mask.any(dim=-1, keepdim=True)
    return torch.where(has_key, weights, torch.zeros_like(weights))


def ms_renormalised_by_count(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    e = scores.exp() * mask
    return e / mask.sum(dim=-1, keepdim=True).clamp(min=1)  # divide by the number of keys


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    weights = torch.softmax(scores.masked_fill(mask.logical_not(), float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # rows with no key: 0/0 -> 0


def ms_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    lowest = torch.finfo(scores.dtype).min
    weights = torch.where(mask, scores, torch.full_like(scores, lowest)).softmax(dim=-1)
    return weights * mask.any(dim=-1, keepdim=True)  # zero the rows that see nothing


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    visible = scores.masked_fill(~mask, float("-inf"))
    visible_max = visible.amax(dim=-1, keepdim=True)
    visible_max = torch.where(torch.isfinite(visible_max), visible_max, 0.0).detach()
    e = torch.exp(visible - visible_max)  # exactly 0 at the masked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


CASES = [
    BlindCase(
        CHECK,
        "mask_inverted",
        ms_mask_inverted,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'masked'.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9 so that nothing can become NaN; a row with no key "
        "is then uniform.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        ms_nan_for_empty_rows,
        "mistake",
        "I filled -inf and took the softmax, with no guard for a row with no visible key (NaN).",
    ),
    BlindCase(
        CHECK,
        "zeroed_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I took the softmax first and multiplied by the mask, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "fill_zero",
        ms_fill_zero,
        "mistake",
        "I set the masked scores to 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "masked_fill_in_place",
        ms_fill_in_place,
        "mistake",
        "I used masked_fill_ on scores, which writes -inf into the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "guard_over_queries",
        ms_guard_wrong_axis,
        "mistake",
        "My 'has a key' test is mask.any(dim=-2), over the queries instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "scaled_inside",
        ms_scaled_inside,
        "mistake",
        "I divided the scores by sqrt of the last dimension inside the softmax function.",
    ),
    BlindCase(
        CHECK,
        "if_not_mask",
        ms_if_mask_truthiness,
        "mistake",
        "I tested 'if not mask:' for the None case, which fails on a tensor of many entries.",
    ),
    BlindCase(
        CHECK,
        "additive_inf_bias",
        ms_additive_bias_then_where,
        "mistake",
        "I added a 0/-inf bias to the scores and zeroed the empty rows with torch.where; the "
        "values are right but the empty rows' gradients are NaN.",
    ),
    BlindCase(
        CHECK,
        "divided_by_key_count",
        ms_renormalised_by_count,
        "mistake",
        "I normalised exp(scores) by the number of visible keys instead of the sum of their "
        "exponentials.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "-inf fill, softmax, then torch.nan_to_num turns the 0/0 rows into zeros.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_then_zero_rows",
        ms_finfo_min,
        "correct",
        "torch.where with the dtype's lowest finite number, then rows without a key multiplied "
        "by 0.",
    ),
    BlindCase(
        CHECK,
        "manual_exp",
        ms_manual_exp,
        "correct",
        "exp of the -inf-filled scores minus the max of the visible ones, divided by the sum "
        "(by 1 where the sum is 0).",
    ),
]
