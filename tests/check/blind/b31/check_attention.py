"""Blind set B31, check_attention (chapter 6): scaled dot-product attention, (out, weights)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def _scores(q: Tensor, k: Tensor) -> Tensor:
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


# ---------------------------------------------------------------- mistakes


def att_weights_transposed(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(_scores(q, k), mask)
    return weights @ v, weights.transpose(-2, -1)  # keys down, queries across, for the heatmap


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_times_sqrt_d(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_scale_by_length(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    n = k.shape[-2]  # the number of keys summed over
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(n), mask)
    return weights @ v, weights


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(_scores(q, k), dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight 0
    return weights @ v, weights


def att_mask_after_softmax_renormalised(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    weights = torch.softmax(_scores(q, k), dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v, weights


def att_no_empty_row_guard(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = _scores(q, k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def att_mask_as_float_added(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = _scores(q, k)
    if mask is not None:
        scores = scores + mask.float()  # the mask as an additive bias
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def att_permute_3d(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.bmm(q, k.permute(0, 2, 1)) / math.sqrt(q.shape[-1])  # (B, T, D) only
    weights = _msoftmax(scores, mask)
    return torch.bmm(weights, v), weights


def att_k_times_q(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # "K Q^T"
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def att_softmax_dim_1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = _scores(q, k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 1 of (B, T_q, T_k)
    return weights @ v, weights


def att_scales_q_in_place(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    q /= math.sqrt(q.shape[-1])  # scale the queries first
    weights = _msoftmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_fill_with_zero(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = _scores(q, k)
    if mask is not None:
        scores = scores * mask  # zero out the masked scores
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def att_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    return _msoftmax(_scores(q, k), mask) @ v  # the weights are only for plotting


# ---------------------------------------------------------------- correct variants


def att_split_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    s = q.shape[-1] ** 0.25
    scores = (q / s) @ (k / s).transpose(-1, -2)  # sqrt(d) split between q and k
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), -math.inf)
        empty = ~mask.any(-1, keepdim=True)
        weights = scores.masked_fill(empty, 0).softmax(-1).masked_fill(empty, 0)
    else:
        weights = scores.softmax(-1)
    return torch.matmul(weights, v), weights


def att_float64_inside(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()
    weights = _msoftmax(_scores(q64, k64), mask)
    return (weights @ v64).to(dtype), weights.to(dtype)


def att_where_and_clamp(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: float | None = None
) -> tuple[Tensor, Tensor]:
    scale = 1 / math.sqrt(k.size(-1)) if scale is None else scale
    scores = torch.matmul(q, k.mT) * scale
    keep = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)
    visible = torch.where(keep, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    top = visible.amax(-1, keepdim=True).detach()
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(visible - top)
    weights = e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny)
    return torch.matmul(weights, v), weights


def att_einsum_heads(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    weights = _msoftmax(scores, mask)
    out = torch.einsum("...ij,...jd->...id", weights, v)
    return out, weights


CASES = [
    BlindCase(
        CHECK,
        "weights_transposed",
        att_weights_transposed,
        "mistake",
        "I returned weights.transpose(-2, -1) so the heatmap has keys down the side.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax instead of before.",
    ),
    BlindCase(
        CHECK,
        "multiplied_by_sqrt_d",
        att_times_sqrt_d,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_number_of_keys",
        att_scale_by_length,
        "mistake",
        "I divided by the square root of the number of keys, reading d as the length.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax_renormalised",
        att_mask_after_softmax_renormalised,
        "mistake",
        "I masked after the softmax and renormalised; a query with no visible key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        att_no_empty_row_guard,
        "mistake",
        "I filled -inf and called softmax directly, so a query that sees no key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "mask_added_as_float",
        att_mask_as_float_added,
        "mistake",
        "I added mask.float() to the scores, as if the boolean mask were an additive one.",
    ),
    BlindCase(
        CHECK,
        "permute_and_bmm",
        att_permute_3d,
        "mistake",
        "I used bmm and k.permute(0, 2, 1), which only works for 3-D (B, T, D) inputs.",
    ),
    BlindCase(
        CHECK,
        "k_times_q",
        att_k_times_q,
        "mistake",
        "I computed K Q^T instead of Q K^T, so scores are (T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        att_softmax_dim_1,
        "mistake",
        "I wrote softmax(dim=1), right for (T_q, T_k) but the query or head axis for batched "
        "inputs.",
    ),
    BlindCase(
        CHECK,
        "scales_q_in_place",
        att_scales_q_in_place,
        "mistake",
        "I scaled q in place with q /= sqrt(d), which changes the caller's tensor (and fails "
        "for a leaf that requires grad).",
    ),
    BlindCase(
        CHECK,
        "mask_multiplies_scores",
        att_fill_with_zero,
        "mistake",
        "I multiplied the scores by the mask, so masked scores become 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        att_out_only,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "scale_split_between_q_and_k",
        att_split_scale,
        "correct",
        "q and k each divided by d^(1/4) before the product; masked_fill with -math.inf.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        att_float64_inside,
        "correct",
        "Computed in float64, both results cast back to the input's dtype.",
    ),
    BlindCase(
        CHECK,
        "where_and_clamped_sum",
        att_where_and_clamp,
        "correct",
        "exp of the visible scores minus their maximum, divided by a clamped sum; an optional "
        "scale argument.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        att_einsum_heads,
        "correct",
        "einsum with ellipsis for both products, scale as d ** -0.5.",
    ),
]
