"""Blind set B9, check_attention (chapter 6): scaled dot-product attention."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _safe_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    empty = ~mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)


# ---------------------------------------------------------------- mistakes


def att_k_dot_T(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.T / math.sqrt(q.shape[-1])  # .T reverses every axis of a batched k
    weights = _safe_softmax(scores, mask)
    return weights @ v, weights


def att_scale_by_num_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of the sequence length
    weights = _safe_softmax(scores, mask)
    return weights @ v, weights


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _safe_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_scale_multiplies(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = _safe_softmax(scores, mask)
    return weights @ v, weights


def att_precedence(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) * (1 / d_k**1 / 2)  # meant 1 / d_k ** (1/2)
    weights = _safe_softmax(scores, mask)
    return weights @ v, weights


def att_fill_minus_1e9(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def att_mixes_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _safe_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights  # the keys instead of the values


def att_returns_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = _safe_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v


def att_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])  # 3-D inputs only
    weights = _safe_softmax(scores, mask)
    return torch.bmm(weights, v), weights


def att_einsum_kq(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.einsum("...qd,...kd->...kq", q, k) / math.sqrt(q.shape[-1])
    weights = _safe_softmax(scores, mask)
    return weights @ v, weights


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # zero the hidden keys
    return weights @ v, weights


def att_mask_polarity(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _safe_softmax(scores, None if mask is None else ~mask)  # True = padding
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_einsum(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.shape[-1] ** 0.5
    weights = _safe_softmax(scores, mask)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def att_scale_query_first(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0
) -> tuple:
    q = q * q.size(-1) ** -0.5
    scores = torch.matmul(q, k.transpose(-1, -2))
    weights = _safe_softmax(scores, mask)
    dropped = torch.nn.functional.dropout(weights, dropout_p) if dropout_p > 0 else weights
    return torch.matmul(dropped, v), weights


def att_float64_inside(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q.double() @ k.double().mT / math.sqrt(q.shape[-1])
    weights = _safe_softmax(scores, mask)
    out = weights @ v.double()
    return out.to(v.dtype), weights.to(q.dtype)


def att_keys_first_layout(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores_kq = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_k, T_q)
    weights = _safe_softmax(scores_kq.transpose(-2, -1), mask)
    return weights @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "k_dot_T_on_batch",
        att_k_dot_T,
        "mistake",
        "I wrote q @ k.T; for batched keys .T reverses all the axes instead of swapping "
        "the last two (right only for 2-D inputs).",
    ),
    BlindCase(
        CHECK,
        "scale_by_number_of_keys",
        att_scale_by_num_keys,
        "mistake",
        "I divided by sqrt(T_k), the number of keys, instead of sqrt(d_k).",
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
        "scale_multiplies",
        att_scale_multiplies,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "operator_precedence_in_scale",
        att_precedence,
        "mistake",
        "I wrote 1 / d_k**1/2 for 1/sqrt(d_k); Python reads it as (1/d_k)/2.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        att_fill_minus_1e9,
        "mistake",
        "I masked with masked_fill(mask == 0, -1e9) as in the Annotated Transformer; a "
        "query with no visible key then averages all the values.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        att_mixes_keys,
        "mistake",
        "I multiplied the weights by k instead of v.",
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
        "bmm_only_3d",
        att_bmm,
        "mistake",
        "I used torch.bmm, which only takes 3-D tensors, so inputs with a head axis (or no "
        "batch axis) fail.",
    ),
    BlindCase(
        CHECK,
        "einsum_scores_kq",
        att_einsum_kq,
        "mistake",
        "My einsum wrote the scores as '...kq' (keys on the rows) and I took the softmax "
        "over the last axis, the queries.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I applied the mask by multiplying the softmax weights, so the visible weights do "
        "not sum to 1.",
    ),
    BlindCase(
        CHECK,
        "mask_true_is_padding",
        att_mask_polarity,
        "mistake",
        "I inverted the mask, treating True as the padding to hide.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        att_einsum,
        "correct",
        "I wrote both products with einsum and the scale as d_k ** 0.5.",
    ),
    BlindCase(
        CHECK,
        "scale_query_first_with_dropout_arg",
        att_scale_query_first,
        "correct",
        "I scaled q by d_k**-0.5 before the product and added an optional dropout_p that "
        "defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        att_float64_inside,
        "correct",
        "I computed the scores, softmax and output in float64 (using .mT) and cast back.",
    ),
    BlindCase(
        CHECK,
        "keys_first_then_transposed",
        att_keys_first_layout,
        "correct",
        "I computed k q^T (keys on the rows) and transposed it back before the softmax.",
    ),
]
