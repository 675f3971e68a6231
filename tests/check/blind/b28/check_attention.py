"""Blind set B28, check_attention (chapter 6): scaled dot-product attention as readers write it."""

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


def attn_scale_both(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = q.shape[-1]
    q, k = q / math.sqrt(d), k / math.sqrt(d)  # scale the queries and the keys
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def attn_times_sqrt_d(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def attn_scale_by_length(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = k.shape[-2]  # the number of keys the dot products are summed over
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d), mask)
    return weights @ v, weights


def attn_precedence(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / d_k**1 / 2  # meant d_k ** (1 / 2)
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def attn_k_dot_t(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.T / math.sqrt(q.shape[-1])  # K^T as in the formula
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def attn_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))  # batched matmul
    weights = _masked_softmax(scores, mask)
    return torch.bmm(weights, v), weights


def attn_weights_transposed_on_v(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights.transpose(-2, -1) @ v, weights  # sum over the keys of alpha_ij v_j


def attn_returns_scores(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, scores  # the attention matrix to plot


def attn_dropout_always_on(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return F.dropout(weights, p=0.1) @ v, weights  # dropout on the weights, as the paper


def attn_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # padded keys get weight 0
    return weights @ v, weights


def attn_mask_unsqueezed(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    if mask is not None:
        mask = mask.unsqueeze(1)  # (B, T_k) -> (B, 1, T_k) for the queries
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def attn_returns_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v


# ---------------------------------------------------------------- correct variants


def attn_flatten_batch(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Any leading axes flattened into one for torch.bmm, then restored."""
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    T_q, T_k = q.shape[-2], k.shape[-2]
    q3 = q.expand(*lead, *q.shape[-2:]).reshape(-1, T_q, q.shape[-1])
    k3 = k.expand(*lead, *k.shape[-2:]).reshape(-1, T_k, k.shape[-1])
    v3 = v.expand(*lead, *v.shape[-2:]).reshape(-1, T_k, v.shape[-1])
    scores = torch.bmm(q3, k3.transpose(1, 2)) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask.expand(*lead, T_q, T_k).reshape(-1, T_q, T_k)
    weights = _masked_softmax(scores, mask)
    out = torch.bmm(weights, v3)
    return out.reshape(*lead, T_q, v.shape[-1]), weights.reshape(*lead, T_q, T_k)


def attn_float64_inside(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Computed in float64 and cast back to the inputs' dtype."""
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
    weights = _masked_softmax(q @ k.mT / math.sqrt(q.shape[-1]), mask)
    return (weights @ v).to(dtype), weights.to(dtype)


def attn_scale_keys(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0
) -> tuple:
    """The scale folded into the keys; masked keys by torch.where; optional dropout_p."""
    scores = torch.matmul(q, (k * k.shape[-1] ** -0.5).transpose(-1, -2))
    if mask is not None:
        visible = mask.expand_as(scores)
        any_visible = visible.any(-1, keepdim=True)
        scores = torch.where(visible, scores, torch.full_like(scores, float("-inf")))
        scores = torch.where(any_visible, scores, torch.zeros_like(scores))
        weights = torch.where(any_visible, scores.softmax(-1), torch.zeros_like(scores))
    else:
        weights = scores.softmax(-1)
    dropped = F.dropout(weights, dropout_p) if dropout_p > 0 else weights
    return torch.matmul(dropped, v), weights


def attn_loop_over_queries(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scale = 1.0 / math.sqrt(q.shape[-1])
    outs, rows = [], []
    for i in range(q.shape[-2]):
        s = (q[..., i : i + 1, :] @ k.transpose(-2, -1)) * scale  # (..., 1, T_k)
        m = mask
        if mask is not None and mask.dim() >= 2 and mask.shape[-2] > 1:
            m = mask[..., i : i + 1, :]  # this query's row of the mask
        w = _masked_softmax(s, m)
        rows.append(w)
        outs.append(w @ v)
    return torch.cat(outs, dim=-2), torch.cat(rows, dim=-2)


CASES = [
    BlindCase(
        CHECK,
        "scaled_q_and_k",
        attn_scale_both,
        "mistake",
        "I divided both q and k by sqrt(d_k) before the product, so the scores are divided by d_k.",
    ),
    BlindCase(
        CHECK,
        "times_sqrt_dk",
        attn_times_sqrt_d,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "scale_by_number_of_keys",
        attn_scale_by_length,
        "mistake",
        "I took d as k.shape[-2], the number of keys, instead of the last dimension.",
    ),
    BlindCase(
        CHECK,
        "power_precedence",
        attn_precedence,
        "mistake",
        "I wrote / d_k**1 / 2 for the square root, which divides by d_k / 2 instead.",
    ),
    BlindCase(
        CHECK,
        "k_dot_T",
        attn_k_dot_t,
        "mistake",
        "I used k.T for K^T, which reverses every axis of a batched tensor, not the last two.",
    ),
    BlindCase(
        CHECK,
        "bmm_only_3d",
        attn_bmm,
        "mistake",
        "I used torch.bmm for both products, which only accepts (B, T, D) and fails with a "
        "head axis or without a batch axis.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed_before_v",
        attn_weights_transposed_on_v,
        "mistake",
        "I multiplied weights.transpose(-2, -1) @ v, which only has the right shape when "
        "T_q = T_k and then mixes the wrong rows.",
    ),
    BlindCase(
        CHECK,
        "returns_scores_as_weights",
        attn_returns_scores,
        "mistake",
        "I return the scaled scores (before the softmax) as the weights.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        attn_dropout_always_on,
        "mistake",
        "I added F.dropout(weights, p=0.1) as in the paper; F.dropout is on by default, so the "
        "output is random.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        attn_mask_after_softmax,
        "mistake",
        "I zeroed the masked weights after the softmax, so the rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed",
        attn_mask_unsqueezed,
        "mistake",
        "I added a query axis to the mask with unsqueeze(1), assuming it comes as (B, T_k).",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        attn_returns_out_only,
        "mistake",
        "I return only the output, not the pair (out, weights).",
    ),
    BlindCase(
        CHECK,
        "flattened_bmm",
        attn_flatten_batch,
        "correct",
        "All leading axes flattened into one for torch.bmm and restored afterwards.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        attn_float64_inside,
        "correct",
        "Computed in float64, q @ k.mT, and both results cast back to the inputs' dtype.",
    ),
    BlindCase(
        CHECK,
        "scale_on_keys_with_where",
        attn_scale_keys,
        "correct",
        "The keys multiplied by d_k ** -0.5 first; the mask applied with torch.where; an "
        "optional dropout_p that defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        attn_loop_over_queries,
        "correct",
        "One query at a time in a Python loop, concatenated along the query axis.",
    ),
]
