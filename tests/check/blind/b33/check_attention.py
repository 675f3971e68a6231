"""Blind set B33, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """The reader's own masked softmax from the cell above (a right one)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_no_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_times_sqrt_dk(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])  # scale by sqrt(d_k)
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_sqrt_dv(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_dk_from_dim_1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.shape[1]  # q is (B, T, d_k)... or so I thought
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def att_softmax_dim_1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))
    return weights @ v, weights


def att_dot_T(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.matmul(q, k.T) / math.sqrt(q.shape[-1])  # k^T as in the formula
    weights = _masked_softmax(scores, mask)
    return torch.matmul(weights, v), weights


def att_pair_swapped(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights, weights @ v


def att_inverted_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask == 0  # mark the positions to hide
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_fill_big_negative(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # hidden keys get weight 0
    return weights @ v, weights


def att_mixes_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), mask)
    return weights @ k, weights  # weighted sum of the keys


def att_scores_k_first(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # every key against every query
    weights = _masked_softmax(scores.transpose(-2, -1).contiguous(), mask)
    return weights.transpose(-2, -1) @ v, weights


def att_no_grad_weights(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    with torch.no_grad():  # the weights are only for looking at
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_own_softmax_where(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """torch.where with -inf, empty rows zeroed, and mT for the transpose."""
    scores = torch.matmul(q, k.mT) / q.size(-1) ** 0.5
    if mask is not None:
        scores = torch.where(mask, scores, scores.new_tensor(float("-inf")))
        empty = ~mask.any(dim=-1, keepdim=True)
        weights = torch.where(empty, 0.0, scores).softmax(-1)
        weights = torch.where(empty, 0.0, weights)
    else:
        weights = scores.softmax(-1)
    return weights @ v, weights


def att_einsum_scaled_q(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """The scale folded into the queries; einsum for both products."""
    q = q * q.shape[-1] ** -0.5
    scores = torch.einsum("...id,...jd->...ij", q, k)
    weights = _masked_softmax(scores, mask)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def att_with_options(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    """Optional dropout and scale with defaults; finfo.min fill and empty rows zeroed."""
    scale = 1 / math.sqrt(k.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-1, -2) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask.any(dim=-1, keepdim=True)
    dropped = torch.nn.functional.dropout(weights, dropout_p) if dropout_p > 0 else weights
    return dropped @ v, weights


CASES = [
    BlindCase(CHECK, "no_scale", att_no_scale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK,
        "times_sqrt_dk",
        att_times_sqrt_dk,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "sqrt_dv",
        att_sqrt_dv,
        "mistake",
        "I scaled by the square root of v's last dimension.",
    ),
    BlindCase(
        CHECK,
        "dk_from_dim_1",
        att_dk_from_dim_1,
        "mistake",
        "I took d_k as q.shape[1], which is the length (or the heads) and not the feature size.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        att_softmax_dim_1,
        "mistake",
        "I took the softmax over dim=1, thinking of (B, T_q, T_k) scores.",
    ),
    BlindCase(
        CHECK,
        "dot_T",
        att_dot_T,
        "mistake",
        "I wrote k.T for the transpose of the keys, as in the formula.",
    ),
    BlindCase(
        CHECK,
        "pair_swapped",
        att_pair_swapped,
        "mistake",
        "I return (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "inverted_mask",
        att_inverted_mask,
        "mistake",
        "I turned the mask around with mask == 0 before masking, reading True as 'hide'.",
    ),
    BlindCase(
        CHECK,
        "fill_big_negative",
        att_fill_big_negative,
        "mistake",
        "I filled the masked scores with -1e9 and took a plain softmax.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I took the softmax first and set the masked weights to 0 after it.",
    ),
    BlindCase(
        CHECK,
        "mixes_keys",
        att_mixes_keys,
        "mistake",
        "I multiplied the weights with k instead of v at the end.",
    ),
    BlindCase(
        CHECK,
        "scores_k_first",
        att_scores_k_first,
        "mistake",
        "I computed k q^T, transposed it for the softmax, and transposed the weights back before "
        "multiplying with v.",
    ),
    BlindCase(
        CHECK,
        "no_grad_weights",
        att_no_grad_weights,
        "mistake",
        "I computed the weights under torch.no_grad() since they are returned for plotting.",
    ),
    BlindCase(
        CHECK,
        "own_softmax_where",
        att_own_softmax_where,
        "correct",
        "torch.where with -inf for the mask, zeros for rows with no key, k.mT for the transpose.",
    ),
    BlindCase(
        CHECK,
        "einsum_scaled_q",
        att_einsum_scaled_q,
        "correct",
        "q multiplied by d_k ** -0.5 first, then einsum for the scores and for the output.",
    ),
    BlindCase(
        CHECK,
        "with_options",
        att_with_options,
        "correct",
        "Extra dropout_p and scale arguments with defaults; finfo.min as the fill and empty "
        "rows multiplied by 0.",
    ),
]
