"""Blind set B29, check_attention (chapter 6): scaled dot-product attention with a boolean mask."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that lie elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def _scores(q: Tensor, k: Tensor) -> Tensor:
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


# ---------------------------------------------------------------- mistakes


def attn_k_dot_T(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.T / math.sqrt(q.shape[-1]), mask)  # K^T as in the formula
    return weights @ v, weights


def attn_scale_by_num_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = k.shape[-2]  # d: the number of keys
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d), mask)
    return weights @ v, weights


def attn_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def attn_mask_multiplies_weights(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    weights = torch.softmax(_scores(q, k), dim=-1)
    if mask is not None:
        weights = weights * mask  # zero where the key is hidden
    return weights @ v, weights


def attn_renormalize_after_mask(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    weights = torch.softmax(_scores(q, k), dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(dim=-1, keepdim=True)  # rows sum to 1 again
    return weights @ v, weights


def attn_fill_zero(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = _scores(q, k)
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def attn_no_empty_row_guard(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = _scores(q, k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def attn_mixes_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(_scores(q, k), mask)
    return weights @ k, weights  # the weighted sum of the keys


def attn_dropout_always(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(_scores(q, k), mask)
    return F.dropout(weights, p=0.1) @ v, weights  # dropout on the weights, as in the paper


def attn_weights_keys_by_queries(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    weights = _masked_softmax(_scores(q, k), mask)
    return weights @ v, weights.transpose(-2, -1)  # (T_k, T_q) to plot keys as rows


def attn_mask_unsqueezed(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    if mask is not None:
        mask = mask.unsqueeze(-2)  # a (B, T_k) padding mask must broadcast over the queries
    weights = _masked_softmax(_scores(q, k), mask)
    return weights @ v, weights


def attn_softmax_without_dim(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = _scores(q, k)
    if mask is not None:
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = F.softmax(scores)  # the axis left to PyTorch
    if mask is not None:
        weights = weights.masked_fill(~has_key, 0.0)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def attn_broadcast_sum(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Scores and output by broadcasting and sums, no matmul; torch.where for the mask."""
    scores = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1) / q.shape[-1] ** 0.5  # (..., T_q, T_k)
    if mask is None:
        weights = scores.softmax(-1)
    else:
        visible = mask.expand_as(scores)
        any_key = visible.any(-1, keepdim=True)
        neg = torch.full_like(scores, float("-inf"))
        safe = torch.where(any_key, torch.where(visible, scores, neg), torch.zeros_like(scores))
        weights = torch.where(any_key, safe.softmax(-1), torch.zeros_like(scores))
    out = (weights.unsqueeze(-1) * v.unsqueeze(-3)).sum(-2)  # (..., T_q, d_v)
    return out, weights


def attn_flatten_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Leading dimensions flattened into one batch for torch.bmm, then restored."""
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    T_q, T_k = q.shape[-2], k.shape[-2]
    q3 = q.expand(*lead, *q.shape[-2:]).reshape(-1, T_q, q.shape[-1])
    k3 = k.expand(*lead, *k.shape[-2:]).reshape(-1, T_k, k.shape[-1])
    v3 = v.expand(*lead, *v.shape[-2:]).reshape(-1, T_k, v.shape[-1])
    scores = torch.bmm(q3, k3.transpose(1, 2)) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        m3 = mask.expand(*lead, T_q, T_k).reshape(-1, T_q, T_k)
        rows = m3.any(-1, keepdim=True)
        scores = scores.masked_fill(~m3, float("-inf")).masked_fill(~rows, 0.0)
        weights = scores.softmax(-1).masked_fill(~rows, 0.0)
    else:
        weights = scores.softmax(-1)
    out = torch.bmm(weights, v3)
    return out.reshape(*lead, T_q, v.shape[-1]), weights.reshape(*lead, T_q, T_k)


def attn_stable_exp(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Softmax by hand: subtract the largest visible score, send the hidden keys to -inf,
    exponentiate, divide by the sum (a row with no visible key divides 0 by 1)."""
    scores = torch.matmul(q, k.mT) / math.sqrt(q.size(-1))
    visible = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)
    top = scores.masked_fill(~visible, float("-inf")).amax(-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top)).detach()
    e = torch.exp((scores - top).masked_fill(~visible, float("-inf")))
    total = e.sum(-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return torch.matmul(weights, v), weights


CASES = [
    BlindCase(
        CHECK,
        "k_dot_T",
        attn_k_dot_T,
        "mistake",
        "I wrote K^T as k.T, which reverses every axis of a batched tensor, not the last two.",
    ),
    BlindCase(
        CHECK,
        "scale_by_number_of_keys",
        attn_scale_by_num_keys,
        "mistake",
        "I took d to be k.shape[-2], the number of keys, and divided by its square root.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        attn_scale_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax instead of before it.",
    ),
    BlindCase(
        CHECK,
        "mask_multiplies_weights",
        attn_mask_multiplies_weights,
        "mistake",
        "I took the softmax first and then multiplied the weights by the mask, so the rows no "
        "longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "renormalize_after_mask",
        attn_renormalize_after_mask,
        "mistake",
        "I multiplied the weights by the mask and divided by their new sum, which gives 0/0 = "
        "NaN for a query that sees no key.",
    ),
    BlindCase(
        CHECK,
        "fill_zero",
        attn_fill_zero,
        "mistake",
        "I set the masked scores to 0 instead of -inf before the softmax.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        attn_no_empty_row_guard,
        "mistake",
        "I filled with -inf and took the softmax, with nothing for a query that sees no key: "
        "its row is NaN.",
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
        "dropout_always_on",
        attn_dropout_always,
        "mistake",
        "I put F.dropout(weights, p=0.1) inside, which is on by default, so the output is random.",
    ),
    BlindCase(
        CHECK,
        "weights_keys_by_queries",
        attn_weights_keys_by_queries,
        "mistake",
        "I return the weights transposed, keys as rows, for plotting.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_again",
        attn_mask_unsqueezed,
        "mistake",
        "I always unsqueeze the mask at -2, thinking it comes as (B, T_k); a mask that already "
        "broadcasts gets an extra axis.",
    ),
    BlindCase(
        CHECK,
        "softmax_default_axis",
        attn_softmax_without_dim,
        "mistake",
        "I called F.softmax(scores) without dim, which picks an axis for me (the first one for "
        "a 3-D tensor).",
    ),
    BlindCase(
        CHECK,
        "broadcast_sums",
        attn_broadcast_sum,
        "correct",
        "Scores and output as broadcast products summed over an axis, no matmul; torch.where for "
        "the mask and the empty rows.",
    ),
    BlindCase(
        CHECK,
        "flatten_bmm",
        attn_flatten_bmm,
        "correct",
        "The leading axes flattened into one batch for torch.bmm and restored at the end.",
    ),
    BlindCase(
        CHECK,
        "stable_exp_by_hand",
        attn_stable_exp,
        "correct",
        "The softmax by hand: subtract the largest visible score, -inf for the hidden keys, "
        "exp, divide by the sum (or by 1 when nothing is visible).",
    ),
]
