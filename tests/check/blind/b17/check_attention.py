"""Blind set B17, check_attention (chapter 6): scaled dot-product attention as readers write it."""

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


def attn_softmax_dim_1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 1 is T_k ... I thought
    return weights @ v, weights


def attn_scale_by_shape_1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = k.shape[1]  # k is (B, T, d_k)... or so I read
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def attn_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def attn_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # hidden keys get weight 0
    return weights @ v, weights


def attn_fill_zero(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # like zero padding
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def attn_mask_equals_one(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask == 1
        has_key = (~mask).any(-1, keepdim=True)
        scores = scores.masked_fill(mask, float("-inf")).masked_fill(~has_key, 0.0)
        weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
    else:
        weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def attn_no_guard(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights = F.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


def attn_bert_additive_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + (1.0 - mask.to(scores.dtype)) * -10000.0  # BERT's extended mask
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def attn_returns_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v


def attn_mixes_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights  # the weighted sum of the keys


def attn_dot_T(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.T / math.sqrt(q.shape[-1]), mask)  # k transposed
    return weights @ v, weights


def attn_keys_times_queries(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_k, T_q)
    weights = _masked_softmax(scores.transpose(-2, -1), mask)  # (..., T_q, T_k) for the softmax
    return weights @ v, weights.transpose(-2, -1)  # back in the layout I computed


def attn_power_precedence(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.shape[-1]
    weights = _masked_softmax(q @ k.transpose(-2, -1) / d_k**1 / 2, mask)  # d_k to the 1/2
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def attn_einsum_where(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """einsum for both products, torch.where for the mask, empty rows zeroed."""
    scores = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    if mask is None:
        weights = scores.softmax(-1)
    else:
        mask = mask.expand_as(scores)
        empty = ~mask.any(-1, keepdim=True)
        scores = torch.where(mask | empty, scores, torch.full_like(scores, float("-inf")))
        weights = torch.where(empty, torch.zeros_like(scores), scores.softmax(-1))
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def attn_split_scale(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0
) -> tuple[Tensor, Tensor]:
    """The scale split between queries and keys, d_k^(-1/4) each; dropout_p with a default."""
    s = q.shape[-1] ** -0.25
    weights = _masked_softmax((q * s) @ (k * s).mT, mask)
    dropped = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    return dropped @ v, weights


def attn_sdpa_out(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """out from F.scaled_dot_product_attention (rows with no key given every key, then zeroed),
    the weights computed alongside for plotting."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), weights
    has_key = mask.any(dim=-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    return out.masked_fill(~has_key, 0.0), weights


CASES = [
    BlindCase(
        CHECK,
        "softmax_dim_1",
        attn_softmax_dim_1,
        "mistake",
        "I took the softmax over dim=1, thinking of (B, T_q, T_k) as (B, T_k, ...); it is the "
        "queries (or the heads for 4-D inputs).",
    ),
    BlindCase(
        CHECK,
        "scale_by_k_shape_1",
        attn_scale_by_shape_1,
        "mistake",
        "I read d_k as k.shape[1], which is the number of keys (or heads), not the key size.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        attn_scale_after_softmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax instead of the scores before it.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        attn_mask_after_softmax,
        "mistake",
        "I took the softmax over all keys and set the masked weights to 0 afterwards, so the "
        "rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        attn_fill_zero,
        "mistake",
        "I filled the masked scores with 0, which still gives them weight e^0.",
    ),
    BlindCase(
        CHECK,
        "mask_equals_one_blocks",
        attn_mask_equals_one,
        "mistake",
        "I filled -inf where mask == 1, reading 1 as 'masked out'.",
    ),
    BlindCase(
        CHECK,
        "no_guard_nan",
        attn_no_guard,
        "mistake",
        "I filled -inf and took the softmax without a guard, so a query with no visible key gets "
        "NaN weights and a NaN output.",
    ),
    BlindCase(
        CHECK,
        "bert_additive_mask",
        attn_bert_additive_mask,
        "mistake",
        "I added (1 - mask) * -10000 to the scores as BERT does; a query with no visible key "
        "then attends to all the masked keys.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        attn_returns_out_only,
        "mistake",
        "I return only out, not the pair (out, weights).",
    ),
    BlindCase(
        CHECK,
        "mixes_keys",
        attn_mixes_keys,
        "mistake",
        "I multiplied the weights by k instead of v.",
    ),
    BlindCase(
        CHECK,
        "k_dot_T",
        attn_dot_T,
        "mistake",
        "I wrote k.T for the transpose, which reverses every axis of a batched tensor.",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        attn_keys_times_queries,
        "mistake",
        "I computed the scores as k @ q^T, transposed them for the softmax and the output, but "
        "returned the weights in my (T_k, T_q) layout.",
    ),
    BlindCase(
        CHECK,
        "power_precedence",
        attn_power_precedence,
        "mistake",
        "I wrote the scale as / d_k**1/2 for the square root; by operator precedence it divides "
        "by 2 * d_k.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        attn_einsum_where,
        "correct",
        "einsum for both products, the scale as d_k**-0.5, torch.where for the mask.",
    ),
    BlindCase(
        CHECK,
        "split_scale_dropout_arg",
        attn_split_scale,
        "correct",
        "q and k each scaled by d_k^(-1/4), k.mT for the transpose, a dropout_p argument "
        "defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "sdpa_out",
        attn_sdpa_out,
        "correct",
        "out from F.scaled_dot_product_attention (a query with no visible key given all keys, "
        "then zeroed), the weights computed separately.",
    ),
]
