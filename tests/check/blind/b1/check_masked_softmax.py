"""Blind cases for check_masked_softmax (chapter 6)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


def ms_minus_1e9(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def ms_no_guard(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # NaN for a row with no visible key


def ms_nan_to_num(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.nan_to_num(w, nan=0.0)  # masked_fill's backward zeroes those gradients


def ms_polarity(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fills where mask is True
    has_key = (~mask).any(-1, keepdim=True)
    return torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1).masked_fill(~has_key, 0.0)


def ms_multiply_after(scores, mask=None):
    w = torch.softmax(scores, dim=-1)
    if mask is not None:
        w = w * mask  # zeroes masked keys but does not renormalise
    return w


def ms_wrong_axis(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    w = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-2)
    return w.masked_fill(~has_key, 0.0)


def ms_masked_score_zero(scores, mask=None):
    if mask is not None:
        scores = scores * mask  # masked scores become 0, not -inf
    return torch.softmax(scores, dim=-1)


def ms_renorm_eps(scores, mask=None):
    e = torch.exp(scores)  # no max subtraction: overflows for large scores
    if mask is not None:
        e = e * mask
    return e / (e.sum(-1, keepdim=True) + 1e-9)


def ms_two_args_required(scores, mask):
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return torch.softmax(scores.masked_fill(~has_key, 0.0), -1).masked_fill(~has_key, 0.0)


def ms_stable_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    safe = scores.masked_fill(~mask, 0.0)
    m = safe.amax(dim=-1, keepdim=True).detach()
    e = torch.exp(safe - m) * mask
    total = e.sum(-1, keepdim=True)
    return e / total.clamp_min(torch.finfo(scores.dtype).tiny)


def ms_where_inf(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    if mask is None:
        return F.softmax(scores, dim=dim)
    neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype)
    filled = torch.where(mask, scores, neg_inf)
    any_key = mask.any(dim=dim, keepdim=True)
    filled = torch.where(any_key, filled, torch.zeros_like(filled))
    return torch.where(any_key, F.softmax(filled, dim=dim), torch.zeros_like(filled))


def ms_logsoftmax_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        visible = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~visible, 0.0)
        return torch.log_softmax(scores, -1).exp() * visible
    return torch.log_softmax(scores, -1).exp()


CASES = [
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_minus_1e9,
        "mistake",
        "fills masked scores with -1e9 instead of -inf and adds no guard for a row with no visible key",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        ms_no_guard,
        "mistake",
        "fills with -inf but does nothing for a row with no visible key, so it comes out NaN",
    ),
    BlindCase(
        CHECK,
        "mask_polarity_flipped",
        ms_polarity,
        "mistake",
        "fills the positions where the mask is True, treating True as 'blocked'",
    ),
    BlindCase(
        CHECK,
        "multiply_without_renormalising",
        ms_multiply_after,
        "mistake",
        "takes the plain softmax and then multiplies by the mask, so rows no longer sum to 1",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_wrong_axis,
        "mistake",
        "takes the softmax over dim=-2 (the queries) instead of the keys",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        ms_masked_score_zero,
        "mistake",
        "multiplies the scores by the mask, so a masked key gets score 0 instead of -inf",
    ),
    BlindCase(
        CHECK,
        "exp_without_max",
        ms_renorm_eps,
        "mistake",
        "exponentiates the raw scores without subtracting the max and divides by sum + 1e-9",
    ),
    BlindCase(
        CHECK,
        "slip_mask_required",
        ms_two_args_required,
        "mistake",
        "makes mask a required argument with no default None",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after",
        ms_nan_to_num,
        "correct",
        "fills with -inf, takes the softmax, and replaces the NaN of a row with no visible key by 0 with nan_to_num",
    ),
    BlindCase(
        CHECK,
        "manual_stable_exp",
        ms_stable_exp,
        "correct",
        "writes the softmax by hand: zero the masked scores, subtract the row max, exp, multiply by the mask, divide with a clamped sum",
    ),
    BlindCase(
        CHECK,
        "torch_where_with_dim_arg",
        ms_where_inf,
        "correct",
        "uses torch.where instead of masked_fill and takes an extra optional dim argument",
    ),
    BlindCase(
        CHECK,
        "log_softmax_exp",
        ms_logsoftmax_exp,
        "correct",
        "computes exp(log_softmax) and multiplies by whether the row has a visible key",
    ),
]
