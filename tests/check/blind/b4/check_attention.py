"""Blind cases for check_attention (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import math

import torch

from .. import BlindCase

CHECK = "check_attention"


def _softmax(scores, mask):
    """My masked softmax from the cell above."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def scale_by_d_v(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    weights = _softmax(scores, mask)
    return weights @ v, weights


def transpose_1_2(q, k, v, mask=None):
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    weights = _softmax(scores, mask)
    return weights @ v, weights


def scale_after_softmax(q, k, v, mask=None):
    weights = _softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def mask_after_softmax(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights


def returns_weights_first(q, k, v, mask=None):
    weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights, weights @ v


def softmax_over_queries(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-2))
    return weights @ v, weights


def power_precedence(q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / d_k**1 / 2  # meant d_k ** (1/2)
    weights = _softmax(scores, mask)
    return weights @ v, weights


def einsum_version(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    weights = _softmax(scores, mask)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def scaled_queries_first(q, k, v, mask=None, scale=None):
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = (q * scale) @ k.mT
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        visible = mask.any(-1, keepdim=True)
        scores = torch.where(visible, scores, 0.0)
        weights = torch.where(visible, scores.softmax(-1), 0.0)
    else:
        weights = scores.softmax(-1)
    return torch.matmul(weights, v), weights


CASES = [
    BlindCase(
        CHECK,
        "scale_by_d_v",
        scale_by_d_v,
        "mistake",
        "I divided by sqrt of v's last dimension instead of d_k",
    ),
    BlindCase(
        CHECK,
        "transpose_1_2",
        transpose_1_2,
        "mistake",
        "I transposed k with transpose(1, 2), thinking of (B, T, D) inputs",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        scale_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax instead of before",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        mask_after_softmax,
        "mistake",
        "I multiplied the softmax weights by the mask instead of masking the scores",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        returns_weights_first,
        "mistake",
        "I returned (weights, out) instead of (out, weights)",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        softmax_over_queries,
        "mistake",
        "I took the softmax over dim=-2 and turned NaNs into zeros",
    ),
    BlindCase(
        CHECK,
        "power_precedence",
        power_precedence,
        "mistake",
        "I wrote scores / d_k**1/2 for the square root, which divides by 2 * d_k",
    ),
    BlindCase(
        CHECK,
        "einsum_version",
        einsum_version,
        "correct",
        "I wrote both products with einsum",
    ),
    BlindCase(
        CHECK,
        "scaled_queries_first",
        scaled_queries_first,
        "correct",
        "I scaled q before the product, used k.mT and torch.where; an optional scale argument",
    ),
]
