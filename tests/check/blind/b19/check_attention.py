"""Blind set B19, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_no_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    w = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return w @ v, w


def att_times_sqrt(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    w = _masked_softmax(q @ k.transpose(-2, -1) * math.sqrt(k.shape[-1]), mask)
    return w @ v, w


def att_scale_dv(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    w = _masked_softmax(q @ k.transpose(-2, -1) / v.shape[-1] ** 0.5, mask)
    return w @ v, w


def att_softmax_queries(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    w = _masked_softmax(scores.transpose(-2, -1), None if mask is None else mask.transpose(-2, -1))
    w = w.transpose(-2, -1)  # normalized over the queries
    return w @ v, w


def att_mask_inverted(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    w = _masked_softmax(scores, None if mask is None else mask.logical_not())
    return w @ v, w


def att_fill_1e9(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    w = scores.softmax(dim=-1)
    return w @ v, w


def att_fill_zero(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0)  # masked scores are zero
    w = scores.softmax(dim=-1)
    return w @ v, w


def att_weights_first(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return w, w @ v


def att_permute_3d(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    scores = torch.bmm(q, k.permute(0, 2, 1)) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)
    w = _masked_softmax(scores, mask)
    return torch.bmm(w, v), w


def att_dropout_default(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return F.dropout(w, p=0.1) @ v, w  # dropout on the weights, as in the paper


def att_mixes_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return w @ k, w  # keys and values are the same thing in self-attention


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        w = w.masked_fill(~mask, 0.0)  # weight exactly 0 for masked keys
    return w @ v, w


# ---------------------------------------------------------------- correct variants


def att_einsum_where(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    """einsum for both products, the scale as rsqrt, torch.where for the mask."""
    d_k = torch.tensor(float(q.shape[-1]), dtype=q.dtype)
    scores = torch.einsum("...id,...jd->...ij", q, k) * torch.rsqrt(d_k)
    if mask is not None:
        scores = torch.where(mask, scores, float("-inf"))
        empty = ~mask.any(-1, keepdim=True)
        scores = torch.where(empty, 0.0, scores)
        weights = torch.where(empty, 0.0, scores.softmax(-1))
    else:
        weights = scores.softmax(-1)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def att_matmul_scaled_keys(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """The scale folded into k, torch.matmul with k.mT; an optional dropout_p (default 0)."""
    scores = torch.matmul(q, (k / math.sqrt(k.size(-1))).mT)
    weights = _masked_softmax(scores, mask)
    out = torch.matmul(F.dropout(weights, dropout_p) if dropout_p else weights, v)
    return out, weights


def att_sdpa_guarded(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    """The weights by hand; out from F.scaled_dot_product_attention, zeroed for empty rows."""
    weights = _masked_softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), mask)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), weights
    has_key = mask.any(-1, keepdim=True)
    safe = mask | ~has_key  # a row with no key sees all keys, then gets zeroed
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe.expand(*weights.shape))
    return out.masked_fill(~has_key, 0.0), weights


CASES = [
    BlindCase(CHECK, "no_scale", att_no_scale, "mistake", "I left out the 1/sqrt(d_k)."),
    BlindCase(
        CHECK,
        "times_sqrt_dk",
        att_times_sqrt,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "scale_by_dv",
        att_scale_dv,
        "mistake",
        "I took the scale from v's last dimension.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        att_softmax_queries,
        "mistake",
        "I normalized each column (over the queries) instead of each row.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        att_mask_inverted,
        "mistake",
        "I inverted the mask, taking True for the positions to hide.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        att_fill_1e9,
        "mistake",
        "I filled masked scores with -1e9 and no guard for a query with no visible key.",
    ),
    BlindCase(
        CHECK,
        "fill_zero",
        att_fill_zero,
        "mistake",
        "I set the masked scores to 0 before the softmax.",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        att_weights_first,
        "mistake",
        "I return (weights, out).",
    ),
    BlindCase(
        CHECK,
        "bmm_permute",
        att_permute_3d,
        "mistake",
        "I used bmm and k.permute(0, 2, 1), which only works for (B, T, d) and not for heads.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        att_dropout_default,
        "mistake",
        "I added F.dropout(weights, p=0.1), which is active by default.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        att_mixes_keys,
        "mistake",
        "I multiplied the weights with k instead of v.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I applied the mask to the weights after the softmax, so rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        att_einsum_where,
        "correct",
        "einsum for both products, rsqrt for the scale, torch.where for the masking.",
    ),
    BlindCase(
        CHECK,
        "scaled_keys_dropout_arg",
        att_matmul_scaled_keys,
        "correct",
        "The scale applied to k before the product, k.mT; an optional dropout_p=0.0.",
    ),
    BlindCase(
        CHECK,
        "sdpa_out_guarded",
        att_sdpa_guarded,
        "correct",
        "out from F.scaled_dot_product_attention with the same mask (empty rows opened and then "
        "zeroed), weights computed by hand.",
    ),
]
