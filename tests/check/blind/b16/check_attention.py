"""Blind set B16, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def attn_scale_after_softmax(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def attn_scale_by_num_keys(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    d = k.shape[-2]  # the size of k
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d), mask)
    return weights @ v, weights


def attn_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])  # batched matmul
    weights = _masked_softmax(scores, mask)
    return torch.bmm(weights, v), weights


def attn_softmax_dim_1(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(F.softmax(scores, dim=1))  # dim=1, after the batch
    return weights @ v, weights


def attn_mask_multiplies_weights(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get 0
    return weights @ v, weights


def attn_renormalize_nan(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(dim=-1, keepdim=True)  # sum to 1 again
    return weights @ v, weights


def attn_scores_zeroed(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores * mask  # zero the scores of the padding
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def attn_returns_scores(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, scores  # the scores show more than the weights in a plot


def attn_dropout_always(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return F.dropout(weights, p=0.1) @ v, weights  # dropout on the weights, as in the paper


def attn_scales_q_in_place(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    q /= math.sqrt(q.shape[-1])  # scale the queries once instead of the T_q x T_k scores
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def attn_mask_polarity(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, None if mask is None else mask.logical_not())
    return torch.matmul(weights, v), weights


# ---------------------------------------------------------------- correct variants


def attn_finfo_fill(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = torch.matmul(q, k.transpose(-1, -2)).div(math.sqrt(k.size(-1)))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask.any(dim=-1, keepdim=True)  # no visible key: zero weights
    return torch.matmul(weights, v), weights


def attn_einsum_where(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
        weights = torch.softmax(scores, dim=-1)
        weights = torch.where(mask.any(-1, keepdim=True), weights, torch.zeros_like(weights))
    else:
        weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def attn_exp_by_hand(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    """Softmax written out with in-place ops on its own temporaries; dropout and scale options."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.mT
    scores.mul_(scale)
    if mask is None:
        mask = torch.ones(1, dtype=torch.bool, device=q.device)
    visible = mask.expand_as(scores)
    top = scores.masked_fill(~visible, float("-inf")).amax(dim=-1, keepdim=True)
    top = top.nan_to_num(0.0, posinf=0.0, neginf=0.0).detach()
    e = torch.exp(scores - top) * visible
    weights = e / e.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny)
    dropped = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    return dropped @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "scale_after_softmax",
        attn_scale_after_softmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax instead of the scores before it.",
    ),
    BlindCase(
        CHECK,
        "scale_by_number_of_keys",
        attn_scale_by_num_keys,
        "mistake",
        "I took d from k.shape[-2], the number of keys, instead of k.shape[-1].",
    ),
    BlindCase(
        CHECK,
        "bmm_three_dims_only",
        attn_bmm,
        "mistake",
        "I used torch.bmm and transpose(1, 2), which only works for (B, T, D) and fails with "
        "extra leading axes such as heads.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        attn_softmax_dim_1,
        "mistake",
        "I wrote softmax(dim=1), the axis after the batch, which is the queries for (B, T, D) "
        "and the heads for (B, H, T, D).",
    ),
    BlindCase(
        CHECK,
        "mask_multiplies_weights",
        attn_mask_multiplies_weights,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "renormalized_nan_rows",
        attn_renormalize_nan,
        "mistake",
        "I multiplied by the mask and divided by the row sum; a query with no visible key "
        "gets 0/0 = NaN.",
    ),
    BlindCase(
        CHECK,
        "scores_multiplied_by_mask",
        attn_scores_zeroed,
        "mistake",
        "I multiplied the scores by the mask, which sets masked scores to 0, not to -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_scores_not_weights",
        attn_returns_scores,
        "mistake",
        "I returned the scaled scores as the second value instead of the softmax weights.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        attn_dropout_always,
        "mistake",
        "I added F.dropout(weights, p=0.1) as in the paper; F.dropout is in training mode by "
        "default, so the output is random.",
    ),
    BlindCase(
        CHECK,
        "q_scaled_in_place",
        attn_scales_q_in_place,
        "mistake",
        "I scaled the queries with q /= sqrt(d_k), which changes the caller's q (or fails on a "
        "leaf that requires grad).",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        attn_mask_polarity,
        "mistake",
        "I negated the mask, thinking True marks the padding to hide.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_fill",
        attn_finfo_fill,
        "correct",
        "Masked scores filled with torch.finfo(dtype).min, empty rows multiplied by 0 after "
        "the softmax.",
    ),
    BlindCase(
        CHECK,
        "einsum_and_where",
        attn_einsum_where,
        "correct",
        "einsum for both products, torch.where with -inf, and torch.where again to zero the "
        "rows without a visible key.",
    ),
    BlindCase(
        CHECK,
        "softmax_by_hand_with_options",
        attn_exp_by_hand,
        "correct",
        "Softmax written out (exp minus the row max, times the mask, over the clamped sum), "
        "k.mT and mul_ on its own scores; dropout_p and scale arguments with defaults.",
    ),
]
