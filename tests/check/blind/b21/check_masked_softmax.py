"""Blind set B21, check_masked_softmax (chapter 6): the masked softmax as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-2).nan_to_num(0.0).masked_fill(~has_key, 0.0)


def ms_true_blocks(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = (~mask).any(-1, keepdim=True)
    scores = scores.masked_fill(mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def ms_plain_minus_inf(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get 0
    return weights


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)  # masked score = 0
    return weights.masked_fill(~has_key, 0.0)


def ms_no_none_branch(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_scales_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores / math.sqrt(scores.shape[-1])  # attention's scale
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_has_key_wrong_axis(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-2, keepdim=True)  # any visible key?
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.log_softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.log_softmax(scores, dim=-1).masked_fill(~mask, 0.0)


def ms_renormalize_mean(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.exp(scores)
    if mask is not None:
        weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-9).mean()


# ---------------------------------------------------------------- correct variants


def ms_where_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    mask = mask.expand_as(scores)
    visible = mask.any(dim=-1, keepdim=True)
    safe = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    safe = torch.where(visible, safe, torch.zeros_like(scores))
    return torch.where(visible, safe.softmax(-1), torch.zeros_like(scores))


def ms_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    lowest = torch.finfo(scores.dtype).min
    weights = torch.softmax(scores.masked_fill(~mask, lowest), dim=-1)
    return weights * mask.any(dim=-1, keepdim=True)  # rows with no key: all zeros


def ms_by_hand(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    masked = scores.masked_fill(~mask, float("-inf"))
    row_max = masked.amax(-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max)).detach()
    e = torch.exp(masked - row_max)  # exp(-inf) = 0 at masked keys
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_logsumexp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        has_key = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    log_w = scores - scores.logsumexp(dim=-1, keepdim=True)
    weights = log_w.exp()
    return weights if mask is None else weights.masked_fill(~has_key, 0.0)


CASES = [
    BlindCase(CHECK, "over_queries", ms_over_queries, "mistake", "I took the softmax over dim=-2."),
    BlindCase(
        CHECK,
        "true_blocks",
        ms_true_blocks,
        "mistake",
        "I read True as 'blocked' (PyTorch's nn.MultiheadAttention convention).",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9, so a row with no visible key comes out uniform.",
    ),
    BlindCase(
        CHECK,
        "plain_minus_inf",
        ms_plain_minus_inf,
        "mistake",
        "I filled with -inf and took the softmax, nothing for rows with no visible key (NaN).",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the softmax first and multiplied by the mask, without renormalising.",
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
        "no_none_branch",
        ms_no_none_branch,
        "mistake",
        "I forgot the mask=None case, so calling without a mask fails.",
    ),
    BlindCase(
        CHECK,
        "scales_inside",
        ms_scales_inside,
        "mistake",
        "I put the 1/sqrt(d) scale inside the softmax function (by the last axis's size).",
    ),
    BlindCase(
        CHECK,
        "fills_scores_in_place",
        ms_in_place,
        "mistake",
        "I used masked_fill_ on the scores, which changes the caller's tensor (and fails on a "
        "leaf that requires grad).",
    ),
    BlindCase(
        CHECK,
        "has_key_wrong_axis",
        ms_has_key_wrong_axis,
        "mistake",
        "I looked for rows with no visible key with any(dim=-2) instead of dim=-1.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I used log_softmax (returning log-weights).",
    ),
    BlindCase(
        CHECK,
        "normalised_by_mean_sum",
        ms_renormalize_mean,
        "mistake",
        "I exponentiated, zeroed masked keys and divided by the mean of the row sums instead "
        "of each row's own sum.",
    ),
    BlindCase(
        CHECK,
        "where_guard",
        ms_where_guard,
        "correct",
        "torch.where for the -inf fill, the guard and the zero rows.",
    ),
    BlindCase(
        CHECK,
        "finfo_min",
        ms_finfo_min,
        "correct",
        "Filled with the dtype's lowest finite value, then multiplied rows with no key by 0.",
    ),
    BlindCase(
        CHECK,
        "by_hand",
        ms_by_hand,
        "correct",
        "exp(masked score - row max) divided by the row sum (by 1 where the sum is 0).",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        ms_logsumexp,
        "correct",
        "exp(scores - logsumexp(scores)) with the -inf fill and the guard.",
    ),
]
