"""Blind set B27, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, as the reader wrote it in the cell before."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_scale_by_length(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of the number of keys
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_both_scaled(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = q.shape[-1]
    q, k = q / math.sqrt(d), k / math.sqrt(d)  # keep both at unit variance
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_k_dot_T(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.T / math.sqrt(q.shape[-1])  # K^T, as in the formula
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_returns_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v


def att_mask_multiplied(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight 0
    return weights @ v, weights


def att_no_empty_row_guard(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def att_weights_times_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), mask)
    return weights @ k, weights  # the weighted sum of the keys


def att_scales_q_in_place(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    q /= math.sqrt(q.shape[-1])  # saves one (T_q, T_k) division
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_mask_head_axis(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    if mask is not None:
        mask = mask.unsqueeze(1)  # one mask for every head
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_dk_from_dim_one(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.size(1)  # q is (B, T, d_k)... or so I thought
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def att_weights_transposed(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights.transpose(-2, -1)  # keys on the rows, for the heatmap


def att_sdpa_is_causal(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    out = F.scaled_dot_product_attention(q, k, v, is_causal=mask is not None)  # a mask = causal
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        causal = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device).tril()
        return out, _masked_softmax(scores, causal)
    return out, scores.softmax(-1)


# ---------------------------------------------------------------- correct variants


def att_flattened_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """The leading axes flattened into one batch for torch.bmm, and restored at the end."""
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    q3 = q.expand(*batch, *q.shape[-2:]).reshape(-1, *q.shape[-2:])
    k3 = k.expand(*batch, *k.shape[-2:]).reshape(-1, *k.shape[-2:])
    v3 = v.expand(*batch, *v.shape[-2:]).reshape(-1, *v.shape[-2:])
    scores = torch.bmm(q3, k3.transpose(1, 2)) * (1.0 / math.sqrt(q.shape[-1]))
    scores = scores.view(*batch, q.shape[-2], k.shape[-2])
    weights = _masked_softmax(scores, mask)
    out = torch.bmm(weights.reshape(-1, *weights.shape[-2:]), v3)
    return out.view(*batch, q.shape[-2], v.shape[-1]), weights


def att_sdpa_with_guard(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """The output from F.scaled_dot_product_attention, the weights computed beside it."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), weights
    has_key = mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    return out.masked_fill(~has_key, 0.0), weights


def att_float64_inside(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Computed in float64 and cast back to the inputs' dtype."""
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()
    scores = torch.matmul(q64, k64.mT) / q64.shape[-1] ** 0.5
    if mask is not None:
        empty = ~mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, -math.inf).masked_fill(empty, 0.0)
        weights = scores.softmax(-1).masked_fill(empty, 0.0)
    else:
        weights = scores.softmax(-1)
    return torch.matmul(weights, v64).to(dtype), weights.to(dtype)


def att_loop_over_queries(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """One query at a time: its scores against all keys, masked, softmaxed, mixed."""
    scale = 1 / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask.expand(*mask.shape[:-2], q.shape[-2], k.shape[-2])
    outs, rows = [], []
    for i in range(q.shape[-2]):
        s = (q[..., i : i + 1, :] * scale) @ k.transpose(-2, -1)  # (..., 1, T_k)
        m = None if mask is None else mask[..., i : i + 1, :]
        w = _masked_softmax(s, m)
        rows.append(w)
        outs.append(w @ v)
    return torch.cat(outs, dim=-2), torch.cat(rows, dim=-2)


CASES = [
    BlindCase(
        CHECK,
        "scale_by_sqrt_num_keys",
        att_scale_by_length,
        "mistake",
        "I divided by the square root of k.shape[-2], the number of keys, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax instead of the scores before it.",
    ),
    BlindCase(
        CHECK,
        "both_q_and_k_scaled",
        att_both_scaled,
        "mistake",
        "I divided both q and k by sqrt(d_k), so the scores are divided by d_k.",
    ),
    BlindCase(
        CHECK,
        "k_dot_T",
        att_k_dot_T,
        "mistake",
        "I wrote k.T for K^T, which reverses every axis of a batched tensor.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        att_returns_out_only,
        "mistake",
        "I returned only the output, not the pair (out, weights).",
    ),
    BlindCase(
        CHECK,
        "mask_multiplies_weights",
        att_mask_multiplied,
        "mistake",
        "I took the softmax of all scores and multiplied the weights by the mask afterwards, "
        "without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        att_no_empty_row_guard,
        "mistake",
        "I filled masked scores with -inf but did nothing for a query with no visible key, "
        "which gives NaN.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        att_weights_times_keys,
        "mistake",
        "I multiplied the weights by k instead of v at the end.",
    ),
    BlindCase(
        CHECK,
        "q_scaled_in_place",
        att_scales_q_in_place,
        "mistake",
        "I scaled q in place with q /= sqrt(d_k), which changes the caller's queries.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_for_heads",
        att_mask_head_axis,
        "mistake",
        "I added a head axis to the mask with unsqueeze(1), though it already broadcasts.",
    ),
    BlindCase(
        CHECK,
        "d_k_from_size_one",
        att_dk_from_dim_one,
        "mistake",
        "I read d_k as q.size(1), which is the length (or the heads), not the last axis.",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        att_weights_transposed,
        "mistake",
        "I returned the weights transposed, keys on the rows, for plotting.",
    ),
    BlindCase(
        CHECK,
        "sdpa_is_causal",
        att_sdpa_is_causal,
        "mistake",
        "I passed is_causal=True to F.scaled_dot_product_attention whenever a mask was given, "
        "instead of the mask itself.",
    ),
    BlindCase(
        CHECK,
        "flattened_bmm",
        att_flattened_bmm,
        "correct",
        "Leading axes flattened for torch.bmm, the scale as a multiplication, shapes restored.",
    ),
    BlindCase(
        CHECK,
        "sdpa_output_with_guard",
        att_sdpa_with_guard,
        "correct",
        "out from F.scaled_dot_product_attention with the same boolean mask (empty rows opened, "
        "then zeroed), the weights computed beside it.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        att_float64_inside,
        "correct",
        "Computed in float64 with .mT and ** 0.5, cast back to the inputs' dtype.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        att_loop_over_queries,
        "correct",
        "A loop over the queries, each row scaled, masked and mixed alone.",
    ),
]
