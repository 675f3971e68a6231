"""Blind set B31, check_masked_softmax (chapter 6): a softmax in which masked keys weigh 0."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_polarity(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    has_key = (~mask).any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # a very negative number, no -inf, no NaN
    return torch.softmax(scores, dim=-1)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # an empty row gives NaN


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask  # zero the masked keys


def ms_multiply_and_renormalise(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(-1, keepdim=True)  # 0/0 for a row with no key


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # masked scores removed
    return torch.softmax(scores, dim=-1)


def ms_dim_minus_two(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    has_key = torch.isfinite(scores).any(-2, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(dim=-2)  # over the rows
    return weights.masked_fill(~has_key, 0.0)


def ms_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # saves a copy
    scores.masked_fill_(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def ms_additive_bool(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask.to(scores.dtype)  # an additive mask, as in nn.Transformer
    return torch.softmax(scores, dim=-1)


def ms_no_none(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))  # mask is always given, I thought
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_guard_without_zeroing(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1)  # no NaN; empty rows get 1/T_k


def ms_padding_axis_added(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    mask = mask.unsqueeze(-2)  # a padding mask needs a query axis
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.log_softmax(-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).log_softmax(-1).masked_fill(~mask, 0.0)


# ---------------------------------------------------------------- correct variants


def ms_where_logsumexp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    has_key = mask.any(-1, keepdim=True)
    safe = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    safe = torch.where(has_key, safe, torch.zeros_like(scores))
    weights = torch.exp(safe - torch.logsumexp(safe, dim=-1, keepdim=True))
    return torch.where(has_key & mask, weights, torch.zeros_like(weights))


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    keep = torch.ones_like(scores) if mask is None else mask.to(scores.dtype)
    visible = scores.masked_fill(keep == 0, float("-inf"))
    top = visible.amax(-1, keepdim=True).detach()
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(visible - top)
    return e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)


def ms_with_dim(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    if mask is not None:
        visible = mask.any(dim=dim, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~visible, 0.0)
        return torch.softmax(scores, dim=dim) * visible
    return torch.softmax(scores, dim=dim)


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # NaN rows -> zeros


def ms_float64_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    s = scores.double()
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
        empty = torch.isneginf(s).all(-1, keepdim=True)
        w = s.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
    else:
        w = s.softmax(-1)
    return w.to(scores.dtype)


CASES = [
    BlindCase(
        CHECK,
        "polarity_inverted",
        ms_polarity,
        "mistake",
        "I filled -inf where the mask is True, i.e. I read True as 'blocked'.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_minus_1e9,
        "mistake",
        "I filled -1e9 instead of -inf, so a row with no visible key becomes uniform over the "
        "masked keys.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        ms_no_guard,
        "mistake",
        "I filled -inf and took the softmax; a row with no visible key gives NaN.",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the softmax first and multiplied by the mask, so the rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "multiply_and_renormalise",
        ms_multiply_and_renormalise,
        "mistake",
        "I multiplied by the mask after the softmax and renormalised; a row with no key is 0/0.",
    ),
    BlindCase(
        CHECK,
        "fill_zero",
        ms_fill_zero,
        "mistake",
        "I set masked scores to 0 instead of -inf, so masked keys still get weight.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_rows",
        ms_dim_minus_two,
        "mistake",
        "I took the softmax over dim=-2.",
    ),
    BlindCase(
        CHECK,
        "fills_scores_in_place",
        ms_in_place,
        "mistake",
        "I used masked_fill_ on the scores to save memory, which overwrites the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "bool_mask_added",
        ms_additive_bool,
        "mistake",
        "I added the mask to the scores as a float, as if it were an additive mask.",
    ),
    BlindCase(
        CHECK,
        "crashes_without_mask",
        ms_no_none,
        "mistake",
        "I never handled mask=None, so ~mask raises.",
    ),
    BlindCase(
        CHECK,
        "guard_without_zeroing",
        ms_guard_without_zeroing,
        "mistake",
        "I set the scores of an empty row to 0 to avoid NaN but forgot to zero its weights, so "
        "it is uniform.",
    ),
    BlindCase(
        CHECK,
        "query_axis_added_to_mask",
        ms_padding_axis_added,
        "mistake",
        "I always unsqueezed the mask at -2, thinking of a (B, T_k) padding mask, which breaks "
        "masks that already have a query axis.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I returned log_softmax, copying the loss code of chapter 2.",
    ),
    BlindCase(
        CHECK,
        "where_logsumexp",
        ms_where_logsumexp,
        "correct",
        "torch.where and logsumexp, zeros for masked keys and empty rows.",
    ),
    BlindCase(
        CHECK,
        "manual_exp_clamped_sum",
        ms_manual_exp,
        "correct",
        "exp of the scores minus the visible maximum, times the mask, divided by a sum clamped "
        "away from 0.",
    ),
    BlindCase(
        CHECK,
        "extra_dim_argument",
        ms_with_dim,
        "correct",
        "An extra dim argument defaulting to -1; empty rows zeroed by multiplying with 'any'.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        ms_float64_inside,
        "correct",
        "Computed in float64, cast back to the scores' dtype.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after",
        ms_nan_to_num,
        "correct",
        "masked_fill with -inf, softmax, then nan_to_num(nan=0.0) turns an empty row into "
        "zeros (masked_fill passes no gradient to the filled scores, so none is NaN).",
    ),
]
