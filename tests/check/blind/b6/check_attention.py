"""Blind set B6, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def attn_no_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def attn_scale_by_dv(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = v.shape[-1]  # the model's width
    weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(d), mask)
    return weights @ v, weights


def attn_divide_by_dk(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _softmax(q @ k.transpose(-2, -1) / q.shape[-1], mask)
    return weights @ v, weights


def attn_softmax_over_queries(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(dim=-2))
    return weights @ v, weights


def attn_transpose_1_2(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])  # (B, T, D) -> (B, D, T)
    weights = _softmax(scores, mask)
    return weights @ v, weights


def attn_returns_weights_first(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights, weights @ v


def attn_true_blocks(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _softmax(scores, None if mask is None else ~mask)  # True = blocked, as in PyTorch
    return weights @ v, weights


def attn_fill_minus_1e9(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)  # the Annotated Transformer's fill
    weights = F.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


def attn_sdpa_weights_unmasked(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # the fast path for out
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)  # to plot
    return out, weights


def attn_weights_detached(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    weights = weights.detach()  # returned for plotting, so no graph needed
    return weights @ v, weights


def attn_float32_inside(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    q, k, v = q.float(), k.float(), v.float()  # float32 is what GPUs like
    weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def attn_einsum(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        empty = torch.isneginf(scores).all(dim=-1, keepdim=True)
        weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    else:
        weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def attn_scaled_queries(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    """The scale folded into the queries first; optional dropout and scale with defaults."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = torch.matmul(q * scale, k.mT)
    weights = _softmax(scores, mask)
    dropped = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    return torch.matmul(dropped, v), weights


def attn_logsumexp(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    visible = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    any_key = mask.any(-1, keepdim=True)
    lse = torch.logsumexp(torch.where(any_key, visible, torch.zeros_like(visible)), -1, True)
    weights = torch.where(mask & any_key, torch.exp(visible - lse), torch.zeros_like(scores))
    return weights @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "no_scale",
        attn_no_scale,
        "mistake",
        "I forgot to divide the scores by sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_dv",
        attn_scale_by_dv,
        "mistake",
        "I divided by the square root of v's last dimension, d_v, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "divide_by_dk",
        attn_divide_by_dk,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        attn_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=-2, the queries, instead of over the keys.",
    ),
    BlindCase(
        CHECK,
        "transpose_1_2",
        attn_transpose_1_2,
        "mistake",
        "I transposed k with transpose(1, 2), which is right for (B, T, D) but swaps the wrong "
        "axes for (B, H, T, D).",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        attn_returns_weights_first,
        "mistake",
        "I return (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        attn_true_blocks,
        "mistake",
        "I inverted the mask, treating True as 'blocked' as nn.MultiheadAttention does.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        attn_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9 (mask == 0) as in the Annotated Transformer, so a "
        "query with no visible key spreads its weight over the masked keys.",
    ),
    BlindCase(
        CHECK,
        "sdpa_out_unmasked_weights",
        attn_sdpa_weights_unmasked,
        "mistake",
        "I took out from F.scaled_dot_product_attention and computed the returned weights "
        "separately, forgetting to mask them.",
    ),
    BlindCase(
        CHECK,
        "weights_detached",
        attn_weights_detached,
        "mistake",
        "I detached the weights (meant for plotting) before multiplying with v, so no gradient "
        "reaches q and k.",
    ),
    BlindCase(
        CHECK,
        "float32_inside",
        attn_float32_inside,
        "mistake",
        "I cast q, k and v to float32 first, so float64 inputs come back as float32.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        attn_einsum,
        "correct",
        "einsum for both products; a row whose scores are all -inf gets zeros.",
    ),
    BlindCase(
        CHECK,
        "scaled_queries_with_options",
        attn_scaled_queries,
        "correct",
        "The scale applied to q before the product, k.mT for the transpose; dropout_p and scale "
        "as extra arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_weights",
        attn_logsumexp,
        "correct",
        "Weights as exp(scores - logsumexp) over the visible keys, zeros elsewhere.",
    ),
]
