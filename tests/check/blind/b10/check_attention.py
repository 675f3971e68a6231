"""Blind set B10, check_attention (chapter 6): scaled dot-product attention as readers write it."""

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


def attn_k_dot_T(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.T / math.sqrt(q.shape[-1])  # K^T as in the formula
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def attn_scale_by_length(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = k.shape[-2]  # the size of the keys
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d), mask)
    return weights @ v, weights


def attn_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def attn_power_precedence(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / d_k**1 / 2  # meant d_k ** (1/2)
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def attn_scaled_twice(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scale = math.sqrt(q.shape[-1])
    q = q / scale  # scale the queries first, as some code does
    weights = _masked_softmax(q @ k.transpose(-2, -1) / scale, mask)
    return weights @ v, weights


def attn_keys_times_queries(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_k, T_q)
    weights = torch.softmax(scores, dim=-1).transpose(-2, -1)  # back to (..., T_q, T_k)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def attn_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # drop the weights of the masked keys
    return weights @ v, weights


def attn_scores_times_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores * mask  # zero out the scores of the padding
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def attn_softmax_dim_1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # (B, T_q, T_k)
    return weights @ v, weights


def attn_no_guard(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = scores.softmax(dim=-1)
    return torch.matmul(weights, v), weights


def attn_mask_polarity(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask == 0  # True where to mask
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def attn_out_from_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights  # the weighted sum of the keys


# ---------------------------------------------------------------- correct variants


def attn_broadcast_product(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Scores as an elementwise product summed over d, without a matrix product."""
    scores = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(dim=-1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
        empty = ~mask.any(dim=-1, keepdim=True)
        weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    else:
        weights = torch.softmax(scores, dim=-1)
    return (weights.unsqueeze(-1) * v.unsqueeze(-3)).sum(dim=-2), weights


def attn_flatten_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Leading dims flattened into one batch for torch.bmm, then restored."""
    lead = q.shape[:-2]
    q3, k3, v3 = (
        q.reshape(-1, *q.shape[-2:]),
        k.reshape(-1, *k.shape[-2:]),
        v.reshape(-1, *v.shape[-2:]),
    )
    scores = torch.bmm(q3, k3.transpose(1, 2)).mul_(q.shape[-1] ** -0.5)  # in place, my tensor
    scores = scores.reshape(*lead, *scores.shape[-2:])
    weights = _masked_softmax(scores, mask)
    out = torch.bmm(weights.reshape(-1, *weights.shape[-2:]), v3)
    return out.reshape(*lead, *out.shape[-2:]), weights


def attn_keys_scaled(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    k = k / math.sqrt(k.size(-1))  # the scale moved onto the keys
    scores = torch.matmul(q, k.transpose(-1, -2))
    if mask is not None:
        visible = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~visible, 0)
        weights = F.softmax(scores, -1) * visible
    else:
        weights = F.softmax(scores, -1)
    return torch.matmul(weights, v), weights


def attn_float64_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """The softmax in float64 for accuracy, cast back to the inputs' dtype."""
    scores = q @ k.mT / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores.double(), mask).to(q.dtype)
    return weights @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "k_dot_T",
        attn_k_dot_T,
        "mistake",
        "I wrote k.T for K^T, which reverses all the axes of a batched tensor.",
    ),
    BlindCase(
        CHECK,
        "scale_by_num_keys",
        attn_scale_by_length,
        "mistake",
        "I divided by the square root of k.shape[-2], the number of keys, not d_k.",
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
        "power_precedence",
        attn_power_precedence,
        "mistake",
        "I wrote / d_k**1/2 for the square root, which divides by d_k and then by 2.",
    ),
    BlindCase(
        CHECK,
        "scaled_twice",
        attn_scaled_twice,
        "mistake",
        "I scaled q by 1/sqrt(d_k) and then the scores again, so the scale is 1/d_k.",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        attn_keys_times_queries,
        "mistake",
        "I computed k @ q^T, took the softmax over its last axis (the queries) and transposed "
        "back; the mask only zeroes weights afterwards.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        attn_mask_after_softmax,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "scores_times_mask",
        attn_scores_times_mask,
        "mistake",
        "I multiplied the scores by the mask before the softmax, so masked keys get a score of "
        "0 and still some weight.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        attn_softmax_dim_1,
        "mistake",
        "I took the softmax over dim=1, the queries for (B, T, D) and the heads for (B, H, T, D).",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        attn_no_guard,
        "mistake",
        "I filled -inf where mask == 0 and did nothing for a query with no visible key, which "
        "gives NaN.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        attn_mask_polarity,
        "mistake",
        "I turned the mask into mask == 0 first, thinking True means masked.",
    ),
    BlindCase(
        CHECK,
        "weighted_keys",
        attn_out_from_keys,
        "mistake",
        "I multiplied the weights with k instead of v.",
    ),
    BlindCase(
        CHECK,
        "broadcast_product",
        attn_broadcast_product,
        "correct",
        "Scores and outputs as broadcast elementwise products summed over an axis, torch.where "
        "for the mask.",
    ),
    BlindCase(
        CHECK,
        "flatten_and_bmm",
        attn_flatten_bmm,
        "correct",
        "Leading dimensions flattened for torch.bmm and restored after; the scale with mul_ in "
        "place on the product.",
    ),
    BlindCase(
        CHECK,
        "keys_scaled",
        attn_keys_scaled,
        "correct",
        "The 1/sqrt(d_k) applied to the keys; empty rows zeroed by multiplying with the "
        "row-has-a-key mask.",
    ),
    BlindCase(
        CHECK,
        "float64_softmax",
        attn_float64_softmax,
        "correct",
        "The softmax computed in float64 and cast back to the inputs' dtype; k.mT for the "
        "transpose.",
    ),
]
