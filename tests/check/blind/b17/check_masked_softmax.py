"""Blind set B17, check_masked_softmax (chapter 6): the softmax that zeroes masked keys, as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        # the smallest number of the dtype: safe in float16 too, unlike -1e9
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1)


def ms_nan_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=-1)  # a row with no key is the caller's problem


def ms_true_blocks(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    has_key = (~mask).any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-2), nan=0.0)


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight exactly 0
    return weights


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return torch.softmax(scores, dim=-1)


def ms_additive_log_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores + torch.log(mask.to(scores.dtype)), dim=-1)  # log 0 = -inf
    return torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))


def ms_fill_not_assigned(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores.masked_fill(~mask, float("-inf"))
        has_key = mask.any(dim=-1, keepdim=True)
        return torch.softmax(scores, dim=-1) * has_key
    return torch.softmax(scores, dim=-1)


def ms_in_place_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_unsqueeze_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.unsqueeze(-2)  # a padding mask (B, T_k) needs a query axis
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_log_probs(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.log_softmax(scores, dim=-1)  # more stable
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.log_softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_renormalise_nan(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(dim=-1, keepdim=True)  # sum to 1 again
    return weights


# ---------------------------------------------------------------- correct variants


def ms_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """torch.where in place of masked_fill, the guard written with all()."""
    if mask is None:
        return scores.softmax(-1)
    neg_inf = torch.full_like(scores, float("-inf"))
    masked = torch.where(mask, scores, neg_inf)
    empty = (~mask).all(dim=-1, keepdim=True)
    safe = torch.where(empty, torch.zeros_like(masked), masked)
    return torch.where(empty, torch.zeros_like(masked), safe.softmax(-1))


def ms_exp_by_hand(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """exp(s - max over the visible keys) times the mask, divided by a clamped sum."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    top = scores.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top)).detach()
    e = torch.exp(scores - top) * mask
    total = e.sum(dim=-1, keepdim=True)
    return e / total.clamp_min(torch.finfo(scores.dtype).tiny)


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """The NaN of an empty row replaced by 0 after the softmax; masked_fill's backward zeroes
    the gradient of the masked scores, so no NaN reaches the caller."""
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)


def ms_log_softmax_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """exp(log_softmax), the empty rows given finite scores first, then zeroed."""
    if mask is None:
        return scores.log_softmax(dim=-1).exp()
    visible = mask.sum(dim=-1, keepdim=True) > 0
    filled = scores.masked_fill(~mask, float("-inf"))
    filled = filled.masked_fill(~visible, 0.0)
    return filled.log_softmax(dim=-1).exp() * visible


CASES = [
    BlindCase(
        CHECK,
        "finfo_min_fill",
        ms_finfo_min,
        "mistake",
        "I filled masked scores with torch.finfo(dtype).min instead of -inf, so a row with no "
        "visible key spreads its weight evenly over the masked keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        ms_nan_rows,
        "mistake",
        "I filled with -inf and took the softmax, with no guard: a row with no visible key is NaN.",
    ),
    BlindCase(
        CHECK,
        "true_means_blocked",
        ms_true_blocks,
        "mistake",
        "I filled -inf where the mask is True, as nn.MultiheadAttention reads its masks.",
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
        "mask_multiplied_after",
        ms_multiply_after,
        "mistake",
        "I took the softmax of all scores and multiplied the weights by the mask afterwards, so "
        "the rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        ms_fill_zero,
        "mistake",
        "I multiplied the scores by the mask, so masked scores are 0, and e^0 = 1 still gives "
        "them weight.",
    ),
    BlindCase(
        CHECK,
        "additive_log_mask_nan_grad",
        ms_additive_log_mask,
        "mistake",
        "I added log(mask) (0 or -inf) to the scores and zeroed the empty rows with torch.where "
        "afterwards; the weights are right but the gradient of an empty row is NaN.",
    ),
    BlindCase(
        CHECK,
        "masked_fill_result_dropped",
        ms_fill_not_assigned,
        "mistake",
        "I called scores.masked_fill(...) without assigning its result, so the mask never "
        "reaches the softmax.",
    ),
    BlindCase(
        CHECK,
        "fills_callers_scores",
        ms_in_place_fill,
        "mistake",
        "I used masked_fill_ on the scores to save a copy, which overwrites the caller's tensor "
        "(and fails on a leaf that requires grad).",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed",
        ms_unsqueeze_mask,
        "mistake",
        "I always added a query axis to the mask with unsqueeze(-2), which breaks masks that "
        "already broadcast.",
    ),
    BlindCase(
        CHECK,
        "log_probabilities",
        ms_log_probs,
        "mistake",
        "I returned log_softmax (more stable, I read) instead of the weights themselves.",
    ),
    BlindCase(
        CHECK,
        "renormalised_nan",
        ms_renormalise_nan,
        "mistake",
        "I multiplied the softmax by the mask and divided by the new row sum; a row with no "
        "visible key is 0/0 = NaN.",
    ),
    BlindCase(
        CHECK,
        "torch_where",
        ms_where,
        "correct",
        "torch.where instead of masked_fill; empty rows found with (~mask).all().",
    ),
    BlindCase(
        CHECK,
        "exp_by_hand",
        ms_exp_by_hand,
        "correct",
        "exp(scores - max over visible keys) times the mask, divided by the sum clamped away from 0.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after",
        ms_nan_to_num,
        "correct",
        "-inf fill, softmax, then nan_to_num turns the empty rows' NaN into 0 (gradients stay "
        "finite because masked_fill zeroes them).",
    ),
    BlindCase(
        CHECK,
        "log_softmax_exp",
        ms_log_softmax_exp,
        "correct",
        "exp(log_softmax) with empty rows found by mask.sum() > 0 and multiplied out at the end.",
    ),
]
