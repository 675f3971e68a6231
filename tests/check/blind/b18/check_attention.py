"""Blind set B18, check_attention (chapter 6): scaled dot-product attention as readers write it."""

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
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_scale_by_num_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of the keys' length
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_scale_multiplies(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_mask_true_blocks(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, None if mask is None else ~mask)
    return weights @ v, weights


def att_inf_no_guard(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # a query with no visible key: 0/0
    return weights @ v, weights


def att_returns_scores(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, scores  # the attention map, to plot


def att_weights_transposed(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights.transpose(-2, -1) @ v, weights  # sum over the queries' weights


def att_dropout_always(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return F.dropout(weights, p=0.1) @ v, weights  # dropout on the weights, as in the paper


def att_multiply_mask_after(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight 0
    return weights @ v, weights


def att_scales_q_in_place(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    q /= math.sqrt(q.shape[-1])  # scale the queries once, before the product
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_mask_on_query_axis(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask.transpose(-2, -1)  # rows are queries, so the mask must be a column
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_mt_and_scale_arg(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: float | None = None
) -> tuple[Tensor, Tensor]:
    """k.mT, the scale as an optional argument, the mask applied with torch.where."""
    if scale is None:
        scale = q.size(-1) ** -0.5
    scores = torch.matmul(q, k.mT) * scale
    if mask is None:
        weights = scores.softmax(-1)
    else:
        visible = mask.any(-1, keepdim=True)
        scores = torch.where(mask, scores, float("-inf"))
        scores = torch.where(visible, scores, 0.0)
        weights = torch.where(visible, scores.softmax(-1), 0.0)
    return torch.matmul(weights, v), weights


def att_scaled_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """The keys divided by sqrt(d_k) instead of the scores."""
    k = k / math.sqrt(k.shape[-1])
    weights = _masked_softmax(q @ k.transpose(-1, -2), mask)
    out = torch.einsum("...qk,...kd->...qd", weights, v)
    return out, weights


def att_sdpa_plus_weights(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """The output from F.scaled_dot_product_attention, the weights computed alongside in
    float64 and cast back."""
    d = q.shape[-1]
    scores = (q.double() @ k.double().transpose(-2, -1)) / math.sqrt(d)
    weights = _masked_softmax(scores, mask).to(q.dtype)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), weights
    visible = mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~visible)
    return out.masked_fill(~visible, 0.0), weights


CASES = [
    BlindCase(
        CHECK,
        "scale_by_num_keys",
        att_scale_by_num_keys,
        "mistake",
        "I divided by the square root of the number of keys instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax, so the weights no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "scale_multiplies",
        att_scale_multiplies,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        att_mask_true_blocks,
        "mistake",
        "I treated True in the mask as 'blocked', the polarity of nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "minus_inf_without_guard",
        att_inf_no_guard,
        "mistake",
        "I filled with -inf and took a plain softmax, so a query with no visible key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "returns_scores",
        att_returns_scores,
        "mistake",
        "I return the scaled scores as the second value instead of the softmax weights.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed_before_v",
        att_weights_transposed,
        "mistake",
        "I multiplied weights.transpose(-2, -1) @ v, mixing the values with a key's column of "
        "weights.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        att_dropout_always,
        "mistake",
        "I added F.dropout(weights, p=0.1), which is active even outside training.",
    ),
    BlindCase(
        CHECK,
        "mask_multiplied_after_softmax",
        att_multiply_mask_after,
        "mistake",
        "I multiplied the softmax weights by the mask instead of masking the scores.",
    ),
    BlindCase(
        CHECK,
        "scales_q_in_place",
        att_scales_q_in_place,
        "mistake",
        "I scaled the queries with q /= sqrt(d_k), which changes the caller's q (or fails when "
        "it requires grad).",
    ),
    BlindCase(
        CHECK,
        "mask_on_query_axis",
        att_mask_on_query_axis,
        "mistake",
        "I transposed the mask so that it runs along the queries, hiding queries instead of keys.",
    ),
    BlindCase(
        CHECK,
        "mT_where_scale_argument",
        att_mt_and_scale_arg,
        "correct",
        "k.mT for the transpose, torch.where for the mask, and an optional scale argument.",
    ),
    BlindCase(
        CHECK,
        "scaled_keys_einsum",
        att_scaled_keys,
        "correct",
        "The keys divided by sqrt(d_k) before the product; einsum for weights @ v.",
    ),
    BlindCase(
        CHECK,
        "sdpa_and_float64_weights",
        att_sdpa_plus_weights,
        "correct",
        "out from F.scaled_dot_product_attention (empty rows made safe, then zeroed); weights "
        "computed alongside in float64 and cast back.",
    ),
]
