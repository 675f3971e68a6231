"""Blind cases for check_attention (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import math

import torch

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_attention"


def forgot_scale(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def scale_by_d_v(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def divided_by_d_k(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def scale_after_softmax(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def d_k_from_shape_1(q, k, v, mask=None):
    d_k = q.shape[1]  # (B, T, d) -> I took the wrong axis
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def softmax_dim_1(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=1)
    return weights @ v, weights


def transpose_1_2(q, k, v, mask=None):
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])  # fine for (B, T, d)
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def multiplied_by_sqrt(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def inline_minus_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def weights_then_out(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights, weights @ v


def einsum_version(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.shape[-1] ** 0.5
    weights = masked_softmax(scores, mask)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def scale_queries_first(q, k, v, mask=None, scale=None):
    if scale is None:
        scale = q.size(-1) ** -0.5
    scores = torch.matmul(q * scale, k.mT)
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        visible = mask.any(dim=-1, keepdim=True)
        weights = torch.softmax(scores.masked_fill(~visible, 0.0), dim=-1) * visible
    else:
        weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


def in_float64(q, k, v, mask=None):
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-1, -2) / math.sqrt(k.shape[-1])
    weights = masked_softmax(scores, mask)
    return (weights @ v).to(dtype), weights.to(dtype)


CASES = [
    BlindCase(
        CHECK,
        "forgot_scale",
        forgot_scale,
        "mistake",
        "I forgot to divide the scores by sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_v",
        scale_by_d_v,
        "mistake",
        "I divided by sqrt(v.shape[-1]), the size of the values, instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "divided_by_d_k",
        divided_by_d_k,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        scale_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax, scaling the weights instead of the scores",
    ),
    BlindCase(
        CHECK,
        "d_k_from_shape_1",
        d_k_from_shape_1,
        "mistake",
        "I took d_k = q.shape[1], which is the number of queries, not the last axis",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        softmax_dim_1,
        "mistake",
        "I wrote softmax(dim=1), which for (B, T_q, T_k) scores is over the queries, "
        "not the keys (and I filled -inf without a guard for empty rows)",
    ),
    BlindCase(
        CHECK,
        "transpose_1_2",
        transpose_1_2,
        "mistake",
        "I transposed the keys with k.transpose(1, 2), which is only right for 3-D inputs "
        "(B, T, d), not for other numbers of leading axes",
    ),
    BlindCase(
        CHECK,
        "multiplied_by_sqrt",
        multiplied_by_sqrt,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing",
    ),
    BlindCase(
        CHECK,
        "inline_minus_1e9",
        inline_minus_1e9,
        "mistake",
        "I masked inline with masked_fill(mask == 0, -1e9) and a plain softmax, so a query with "
        "no visible key spreads its weight over the masked keys",
    ),
    BlindCase(
        CHECK,
        "weights_then_out",
        weights_then_out,
        "mistake",
        "I returned (weights, out) instead of (out, weights)",
    ),
    BlindCase(
        CHECK,
        "einsum_version",
        einsum_version,
        "correct",
        "I wrote both products with einsum and used the book's masked_softmax",
    ),
    BlindCase(
        CHECK,
        "scale_queries_first",
        scale_queries_first,
        "correct",
        "I scaled q before the product (k.mT for the transpose), masked inline with a guard for "
        "empty rows, and added an optional scale argument",
    ),
    BlindCase(
        CHECK,
        "in_float64",
        in_float64,
        "correct",
        "I computed in float64 and cast the results back to the inputs' dtype",
    ),
]
