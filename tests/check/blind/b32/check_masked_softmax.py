"""Blind set B32, check_masked_softmax (chapter 6): the softmax with a boolean key mask."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_no_empty_row_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # a row with no visible key becomes NaN


def ms_guard_without_final_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1)  # forgot to zero the empty rows afterwards: they are uniform


def ms_renormalize_product(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = scores.softmax(-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True)  # 0 / 0 in an empty row


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = scores.softmax(-1)
    return weights if mask is None else weights * mask  # no renormalization


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # "zero out" the masked scores
    return scores.softmax(-1)


def ms_true_blocks(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # True = masked out
    has_key = (~mask).any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_softmax_dim_minus_two(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(scores.softmax(-2))


def ms_fill_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # on the caller's scores
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_padding_unsqueeze(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    mask = mask.unsqueeze(-2)  # (B, T_k) -> (B, 1, T_k), for every query
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_nan_grad(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    additive = torch.zeros_like(scores).masked_fill(~mask, float("-inf"))  # a -inf bias
    weights = (scores + additive).softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    return torch.where(has_key, weights, torch.zeros_like(weights))  # NaN gradient survives


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.log_softmax(-1)  # log-probabilities are more stable
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.log_softmax(-1).masked_fill(~mask, 0.0)


def ms_ignores_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    return torch.softmax(scores, dim=-1)  # masking happens in attention, I thought


def ms_minus_large(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)  # the dtype's minimum
    return torch.softmax(scores, dim=-1)


def ms_float_mask_arith(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores * mask + (1 - mask.float()) * -1e4  # the old BERT trick
    return scores.softmax(-1)


# ---------------------------------------------------------------- correct variants


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    safe = torch.where(mask, scores, torch.zeros_like(scores))
    top = safe.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top)).detach()
    e = torch.exp(safe - top) * mask
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


def ms_float64(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    s = scores.double()
    if mask is not None:
        s = s.masked_fill(mask.logical_not(), float("-inf"))
        empty = ~mask.any(dim=-1, keepdim=True)
        s = s.masked_fill(empty, 0.0)
        return s.softmax(-1).masked_fill(empty, 0.0).to(scores.dtype)
    return s.softmax(-1).to(scores.dtype)


def ms_where_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, -1)
    weights = torch.softmax(torch.where(mask, scores, float("-inf")), dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    return torch.where(has_key, weights, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        ms_no_empty_row_guard,
        "mistake",
        "I filled masked scores with -inf and took the softmax; a row with no visible key is NaN.",
    ),
    BlindCase(
        CHECK,
        "guard_without_final_zero",
        ms_guard_without_final_zero,
        "mistake",
        "I set empty rows' scores to 0 to avoid NaN but forgot to zero their weights afterwards, "
        "so they come out uniform.",
    ),
    BlindCase(
        CHECK,
        "renormalize_product",
        ms_renormalize_product,
        "mistake",
        "I took the softmax, multiplied by the mask and divided by the row sum: empty rows give "
        "0/0 = NaN.",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I multiplied the softmax by the mask and did not renormalize, so rows sum to less than 1.",
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
        "true_blocks",
        ms_true_blocks,
        "mistake",
        "I read True as 'masked out', the nn.MultiheadAttention polarity.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_minus_two",
        ms_softmax_dim_minus_two,
        "mistake",
        "I took the softmax over dim=-2.",
    ),
    BlindCase(
        CHECK,
        "masked_fill_in_place",
        ms_fill_in_place,
        "mistake",
        "I used masked_fill_ on the scores I was given, writing -inf into the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "padding_unsqueeze",
        ms_padding_unsqueeze,
        "mistake",
        "I always did mask.unsqueeze(-2), assuming a (B, T_k) padding mask, which breaks masks "
        "that already broadcast.",
    ),
    BlindCase(
        CHECK,
        "nan_gradient",
        ms_nan_grad,
        "mistake",
        "I added a 0/-inf bias and zeroed empty rows with torch.where after the softmax: the "
        "values are right but the gradient of an empty row is NaN.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I returned log_softmax, thinking it is the stable version.",
    ),
    BlindCase(
        CHECK,
        "ignores_mask",
        ms_ignores_mask,
        "mistake",
        "I took a plain softmax and never used the mask.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_fill",
        ms_minus_large,
        "mistake",
        "I filled with torch.finfo(dtype).min instead of -inf, so an empty row becomes uniform.",
    ),
    BlindCase(
        CHECK,
        "bert_additive_1e4",
        ms_float_mask_arith,
        "mistake",
        "I used scores * mask - 10000 * (1 - mask), the old BERT trick, so a row with no "
        "visible key becomes uniform instead of zeros.",
    ),
    BlindCase(
        CHECK,
        "manual_exp",
        ms_manual_exp,
        "correct",
        "exp of the max-shifted visible scores times the mask, divided by a row sum that is 1 "
        "when the row is empty.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "softmax of the -inf-filled scores, then nan_to_num turns the empty rows' NaN into 0.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        ms_float64,
        "correct",
        "Computed in float64 and cast back to the scores' dtype.",
    ),
    BlindCase(
        CHECK,
        "where_after",
        ms_where_after,
        "correct",
        "torch.where for the -inf fill, and torch.where to zero the empty rows afterwards.",
    ),
]
