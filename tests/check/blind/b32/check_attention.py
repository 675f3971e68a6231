"""Blind set B32, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def at_scale_by_length(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of the number of keys
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def at_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def at_multiply_sqrt(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def at_precedence_half_power(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = q.shape[-1]
    weights = _msoftmax(q @ k.transpose(-2, -1) / d**1 / 2, mask)  # meant d ** (1 / 2)
    return weights @ v, weights


def at_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # zero the hidden keys
    return weights @ v, weights


def at_weights_times_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights  # mixed the keys instead of the values


def at_returns_scores(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return weights @ v, scores  # the scores are what I wanted to plot


def at_nan_for_empty_rows(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    return weights @ v, weights


def at_additive_bool_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask.float()  # an additive mask, as attn_mask can be
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def at_scale_queries_in_place(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    q /= math.sqrt(q.shape[-1])  # scale the queries first, on the caller's tensor
    weights = _msoftmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def at_dim_from_axis_one(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = k.size(1)  # (B, T, D) in my head: the size of axis 1
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def at_implicit_softmax_dim(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(F.softmax(scores))  # no dim given
    return weights @ v, weights


def at_output_transposed(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return v.transpose(-2, -1) @ weights.transpose(-2, -1), weights  # (..., d_v, T_q)


# ---------------------------------------------------------------- correct variants


def at_baddbmm_style(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.size(-1)
    scores = torch.matmul(q, k.mT).mul(1.0 / math.sqrt(d_k))
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
        visible = mask.any(dim=-1, keepdim=True)
        scores = torch.where(visible, scores, torch.zeros_like(scores))
        weights = torch.where(visible, scores.softmax(-1), torch.zeros_like(scores))
    else:
        weights = scores.softmax(-1)
    return torch.matmul(weights, v), weights


def at_float64_inside(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()
    weights = _msoftmax(torch.einsum("...id,...jd->...ij", q64, k64) / q.shape[-1] ** 0.5, mask)
    return (weights @ v64).to(dtype), weights.to(dtype)


def at_fused_out(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """out from F.scaled_dot_product_attention (empty rows opened, then zeroed), same weights."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    weights = _msoftmax(q @ k.transpose(-2, -1) * scale, mask)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), weights
    has_key = mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    return out.masked_fill(~has_key, 0.0), weights


def at_nan_to_num(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: float | None = None
) -> tuple:
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights = torch.nan_to_num(scores.softmax(dim=-1), nan=0.0)
    return weights @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "scale_by_sqrt_len",
        at_scale_by_length,
        "mistake",
        "I divided by the square root of the number of keys instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        at_scale_after_softmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax instead of the scores before it.",
    ),
    BlindCase(
        CHECK,
        "multiply_by_sqrt",
        at_multiply_sqrt,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "precedence_half_power",
        at_precedence_half_power,
        "mistake",
        "I wrote d**1/2, which is d / 2, instead of d ** 0.5.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        at_mask_after_softmax,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        at_weights_times_keys,
        "mistake",
        "I multiplied the weights by k instead of v.",
    ),
    BlindCase(
        CHECK,
        "returns_scores",
        at_returns_scores,
        "mistake",
        "I returned the scaled scores as the second output instead of the softmax weights.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        at_nan_for_empty_rows,
        "mistake",
        "I filled with -inf and took a plain softmax, so a query with no visible key gives NaN.",
    ),
    BlindCase(
        CHECK,
        "additive_bool_mask",
        at_additive_bool_mask,
        "mistake",
        "I added mask.float() to the scores, as if it were an additive mask, so visible keys get "
        "+1 and hidden ones keep their score.",
    ),
    BlindCase(
        CHECK,
        "scale_queries_in_place",
        at_scale_queries_in_place,
        "mistake",
        "I scaled q in place with q /= sqrt(d_k), which changes the caller's queries.",
    ),
    BlindCase(
        CHECK,
        "d_from_axis_one",
        at_dim_from_axis_one,
        "mistake",
        "I took d_k as k.size(1), which is the length (or the heads), not the last axis.",
    ),
    BlindCase(
        CHECK,
        "implicit_softmax_dim",
        at_implicit_softmax_dim,
        "mistake",
        "I called F.softmax without dim, so PyTorch picked an axis that is not the keys.",
    ),
    BlindCase(
        CHECK,
        "output_transposed",
        at_output_transposed,
        "mistake",
        "I computed v^T @ weights^T, which gives the output transposed, (..., d_v, T_q).",
    ),
    BlindCase(
        CHECK,
        "where_matmul",
        at_baddbmm_style,
        "correct",
        "torch.where for the mask and for empty rows, k.mT and .mul(1 / sqrt(d_k)).",
    ),
    BlindCase(
        CHECK,
        "float64_einsum",
        at_float64_inside,
        "correct",
        "float64 inside with einsum, both results cast back to q's dtype.",
    ),
    BlindCase(
        CHECK,
        "fused_out",
        at_fused_out,
        "correct",
        "out from F.scaled_dot_product_attention with empty rows opened and then zeroed; the "
        "weights from a masked softmax.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_with_scale",
        at_nan_to_num,
        "correct",
        "softmax of the -inf-filled scores with nan_to_num for empty rows; an optional scale.",
    ),
]
