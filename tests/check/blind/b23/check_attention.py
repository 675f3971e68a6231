"""Blind set B23, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (the reader's own from the cell above)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_no_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.matmul(q, k.transpose(-2, -1))
    weights = _masked_softmax(scores, mask)
    return torch.matmul(weights, v), weights


def att_scale_by_length(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = k.size(1)  # k is (B, T, D)
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def att_scale_by_dv(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / v.shape[-1] ** 0.5, mask)
    return weights @ v, weights


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_softmax_over_queries(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-2).nan_to_num(0.0)  # one distribution per key
    return weights @ v, weights


def att_true_blocks(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, None if mask is None else mask.logical_not())
    return weights @ v, weights


def att_fill_1e9(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(-1e9, dtype=scores.dtype))
    weights = F.softmax(scores, dim=-1)
    return weights @ v, weights


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight 0
    return weights @ v, weights


def att_additive_bool_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask  # attn_mask is added to the scores
    weights = scores.softmax(-1)
    return weights @ v, weights


def att_returns_scores(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, scores  # the attention matrix, for plotting


def att_scales_q_in_place(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    q /= math.sqrt(q.shape[-1])  # scale the queries once, no extra tensor
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_unsqueezes_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask.unsqueeze(1)  # (B, T_k) -> (B, 1, T_k) for the query axis
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_sqrt_forgotten(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.shape[-1]
    weights = _masked_softmax(q @ k.transpose(-2, -1) * d_k**-2, mask)  # 1 / d_k ** 2
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_split_scale_einsum(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    s = q.shape[-1] ** -0.25  # half of the scale on q, half on k
    scores = torch.einsum("...id,...jd->...ij", q * s, k * s)
    weights = _masked_softmax(scores, mask)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def att_sdpa_plus_weights(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.mT / math.sqrt(q.size(-1))
    weights = _masked_softmax(scores, mask)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), weights
    has_key = mask.any(dim=-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    return out.masked_fill(~has_key, 0.0), weights


def att_extra_args(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = torch.matmul(q, k.transpose(-1, -2)).mul_(scale)  # in place on my own tensor
    if mask is not None:
        visible = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, -math.inf).masked_fill(~visible, 0.0)
        weights = scores.softmax(-1) * visible
    else:
        weights = scores.softmax(-1)
    dropped = F.dropout(weights, dropout_p) if dropout_p > 0 else weights
    return dropped @ v, weights


CASES = [
    BlindCase(CHECK, "no_scale", att_no_scale, "mistake", "I forgot to divide by sqrt(d_k)"),
    BlindCase(
        CHECK,
        "scale_by_length",
        att_scale_by_length,
        "mistake",
        "I took d_k = k.size(1), which is the number of keys for (B, T, D)",
    ),
    BlindCase(
        CHECK, "scale_by_dv", att_scale_by_dv, "mistake", "I scaled by sqrt of the values' size"
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        att_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=-2",
    ),
    BlindCase(
        CHECK,
        "true_blocks",
        att_true_blocks,
        "mistake",
        "I inverted the mask, reading True as blocked",
    ),
    BlindCase(
        CHECK,
        "fill_1e9",
        att_fill_1e9,
        "mistake",
        "I put -1e9 at the masked scores with torch.where, no guard for empty rows",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I multiplied the weights by the mask after the softmax",
    ),
    BlindCase(
        CHECK,
        "additive_bool_mask",
        att_additive_bool_mask,
        "mistake",
        "I added the boolean mask to the scores, as PyTorch adds a float attn_mask",
    ),
    BlindCase(
        CHECK,
        "returns_scores",
        att_returns_scores,
        "mistake",
        "I returned the scaled scores as the second value instead of the weights",
    ),
    BlindCase(
        CHECK,
        "scales_q_in_place",
        att_scales_q_in_place,
        "mistake",
        "I divided q in place by sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "unsqueezes_mask",
        att_unsqueezes_mask,
        "mistake",
        "I unsqueezed the mask at 1 to add a query axis",
    ),
    BlindCase(
        CHECK,
        "sqrt_forgotten",
        att_sqrt_forgotten,
        "mistake",
        "I multiplied by d_k ** -2 instead of d_k ** -0.5",
    ),
    BlindCase(
        CHECK,
        "split_scale_einsum",
        att_split_scale_einsum,
        "correct",
        "q and k each scaled by d_k ** -0.25, einsum for both products",
    ),
    BlindCase(
        CHECK,
        "sdpa_plus_weights",
        att_sdpa_plus_weights,
        "correct",
        "F.scaled_dot_product_attention for out (empty rows made safe, then zeroed), "
        "weights from my masked softmax",
    ),
    BlindCase(
        CHECK,
        "extra_args",
        att_extra_args,
        "correct",
        "optional dropout_p and scale, mul_ on my own scores, weights times 'visible'",
    ),
]
