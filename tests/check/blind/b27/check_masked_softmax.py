"""Blind set B27, check_masked_softmax (chapter 6): the softmax that gives masked keys weight 0, as
readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_zero_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # padded keys are zero vectors: score 0
    return torch.softmax(scores, dim=-1)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask  # masked keys get exactly 0


def ms_renormalize_clamped(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(-1, keepdim=True).clamp_min(1e-9)  # no 0/0 on an empty row


def ms_times_inf(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + (~mask) * float("-inf")  # add -inf where masked, 0 elsewhere
    return torch.softmax(scores, dim=-1)


def ms_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    empty = ~mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf")).masked_fill_(empty, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)


def ms_truthiness(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask:
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1)


def ms_guard_whole_tensor(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    if not mask.any():  # nothing visible at all
        return torch.zeros_like(scores)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def ms_uniform_empty_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask & has_key, float("-inf"))  # an empty row stays as it is
    return torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)


def ms_scaled_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores / math.sqrt(scores.shape[-1])  # keep the softmax from saturating
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_softmax_dim_one(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return F.softmax(scores, dim=1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return F.softmax(scores, dim=1).masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.log_softmax(scores, dim=-1)  # numerically safer
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.log_softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- correct variants


def ms_finfo_fill_times_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """The lowest finite number as the fill, then a multiplication by the mask."""
    if mask is None:
        return scores.softmax(dim=-1)
    lowest = torch.finfo(scores.dtype).min
    weights = scores.masked_fill(~mask, lowest).softmax(dim=-1)
    return weights * mask.to(weights.dtype)


def ms_exp_by_hand(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """exp of the scores minus the visible maximum, zeroed where masked, divided by the sum."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    visible_max = scores.masked_fill(~mask, float("-inf")).amax(dim=dim, keepdim=True)
    visible_max = torch.where(torch.isfinite(visible_max), visible_max, 0.0).detach()
    e = torch.exp(torch.where(mask, scores - visible_max, torch.zeros_like(scores)))
    e = torch.where(mask, e, torch.zeros_like(e))
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)
    return torch.nan_to_num(weights, nan=0.0)  # an empty row gives NaN: make it 0


def ms_where_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, -1)
    filled = torch.where(mask, scores, scores.new_tensor(float("-inf")))
    row_empty = torch.isneginf(filled).all(-1, keepdim=True)
    safe = torch.where(row_empty, torch.zeros_like(filled), filled)
    return torch.where(row_empty, torch.zeros_like(safe), torch.softmax(safe, -1))


CASES = [
    BlindCase(
        CHECK,
        "zero_fill",
        ms_zero_fill,
        "mistake",
        "I set the masked scores to 0, thinking a zero score means zero weight.",
    ),
    BlindCase(
        CHECK,
        "minus_inf_no_guard",
        ms_no_guard,
        "mistake",
        "I filled with -inf and took the softmax, with nothing for a row that sees no key.",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the plain softmax and multiplied it by the mask, so the rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "renormalize_with_clamp",
        ms_renormalize_clamped,
        "mistake",
        "I took the plain softmax, zeroed the masked keys and divided by the row sum clamped at "
        "1e-9; when the masked keys have much larger scores the visible weights underflow.",
    ),
    BlindCase(
        CHECK,
        "mask_times_minus_inf",
        ms_times_inf,
        "mistake",
        "I added (~mask) * -inf to the scores, but 0 * -inf is NaN on the visible keys.",
    ),
    BlindCase(
        CHECK,
        "fills_scores_in_place",
        ms_in_place,
        "mistake",
        "I used masked_fill_ on the scores I was given, changing the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "if_mask_truthiness",
        ms_truthiness,
        "mistake",
        "I wrote `if mask:` instead of `if mask is not None:`.",
    ),
    BlindCase(
        CHECK,
        "guard_for_whole_tensor",
        ms_guard_whole_tensor,
        "mistake",
        "I only guard the case where the whole mask is False, not a single empty row.",
    ),
    BlindCase(
        CHECK,
        "empty_row_uniform",
        ms_uniform_empty_rows,
        "mistake",
        "A row with no visible key gets uniform weights over all keys instead of zeros.",
    ),
    BlindCase(
        CHECK,
        "scaled_inside",
        ms_scaled_inside,
        "mistake",
        "I divided the scores by sqrt of their last dimension inside the masked softmax.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_one",
        ms_softmax_dim_one,
        "mistake",
        "I wrote F.softmax(scores, dim=1), which is the keys axis only for 2-D scores.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I returned log_softmax, which is numerically safer, instead of the weights.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_fill_times_mask",
        ms_finfo_fill_times_mask,
        "correct",
        "The dtype's lowest finite value as the fill, then the weights multiplied by the mask.",
    ),
    BlindCase(
        CHECK,
        "exp_by_hand_with_dim",
        ms_exp_by_hand,
        "correct",
        "exp(scores - visible max) by hand, zero where masked, divided by a sum that is never 0; "
        "an extra dim argument.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after",
        ms_nan_to_num,
        "correct",
        "-inf fill and softmax, then nan_to_num turns an empty row's NaN into zeros (masked_fill "
        "already stops the gradient there).",
    ),
    BlindCase(
        CHECK,
        "where_guard",
        ms_where_guard,
        "correct",
        "torch.where for the fill and for the empty rows, found with isneginf(...).all(-1).",
    ),
]
