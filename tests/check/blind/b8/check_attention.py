"""Blind set B8, check_attention (chapter 6): scaled dot-product attention returning (out, weights)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def scale_after_softmax(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def scale_by_number_of_keys(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt(T_k)
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def d_k_from_size_1(q, k, v, mask=None):
    d_k = q.size(1)  # meant the feature size; for (B, T, D) this is T
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def masked_fill_zero(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # "zero out" the masked scores
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def mask_blocks_where_true(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, None if mask is None else ~mask)  # I read True as "hide"
    return weights @ v, weights


def returns_scores_not_weights(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return weights @ v, scores


def bmm_only_three_dims(q, k, v, mask=None):
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return torch.bmm(weights, v), weights


def weights_transposed_before_values(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return weights.transpose(-2, -1) @ v, weights


def additive_minus_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + (~mask).float() * -1e9  # additive mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def functional_dropout_left_on(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return F.dropout(weights, p=0.1) @ v, weights  # F.dropout defaults to training=True


def values_and_keys_swapped(q, k, v, mask=None):
    scores = q @ v.transpose(-2, -1) / math.sqrt(q.shape[-1])  # scored against the values
    weights = _msoftmax(scores, mask)
    return weights @ k, weights


# ---------------------------------------------------------------- correct variants


def einsum_version(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    weights = _msoftmax(scores, mask)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def prescaled_float64(q, k, v, mask=None):
    dtype = q.dtype
    d = q.shape[-1]
    qs, ks = q.double() / d**0.25, k.double() / d**0.25  # sqrt(d) split between q and k
    weights = _msoftmax(qs @ ks.mT, mask)
    return (weights @ v.double()).to(dtype), weights.to(dtype)


def flatten_to_bmm(q, k, v, mask=None, scale=None):
    *lead, T_q, d = q.shape
    T_k, d_v = k.shape[-2], v.shape[-1]
    scale = 1 / math.sqrt(d) if scale is None else scale
    q3, k3, v3 = q.reshape(-1, T_q, d), k.reshape(-1, T_k, d), v.reshape(-1, T_k, d_v)
    scores = torch.bmm(q3, k3.transpose(1, 2)).view(*lead, T_q, T_k) * scale
    weights = _msoftmax(scores, mask)
    out = torch.bmm(weights.reshape(-1, T_q, T_k), v3).view(*lead, T_q, d_v)
    return out, weights


CASES = [
    BlindCase(
        CHECK,
        "scale_after_softmax",
        scale_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax instead of before it",
    ),
    BlindCase(
        CHECK,
        "scale_by_number_of_keys",
        scale_by_number_of_keys,
        "mistake",
        "I divided the scores by sqrt(T_k), the number of keys, instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "d_k_from_size_1",
        d_k_from_size_1,
        "mistake",
        "I took d_k = q.size(1), which is the sequence length for (B, T, D) inputs",
    ),
    BlindCase(
        CHECK,
        "masked_fill_zero",
        masked_fill_zero,
        "mistake",
        "I set the masked scores to 0 with masked_fill(~mask, 0) instead of -inf",
    ),
    BlindCase(
        CHECK,
        "mask_blocks_where_true",
        mask_blocks_where_true,
        "mistake",
        "I read the mask as True = hide (nn.MultiheadAttention's convention)",
    ),
    BlindCase(
        CHECK,
        "returns_scores_not_weights",
        returns_scores_not_weights,
        "mistake",
        "I returned the scaled scores as the second output instead of the softmax weights",
    ),
    BlindCase(
        CHECK,
        "bmm_only_three_dims",
        bmm_only_three_dims,
        "mistake",
        "I used torch.bmm and transpose(1, 2), which only works for 3-D (B, T, D) inputs",
    ),
    BlindCase(
        CHECK,
        "weights_transposed_before_values",
        weights_transposed_before_values,
        "mistake",
        "I multiplied weights.transpose(-2, -1) @ v; it runs when T_q == T_k but mixes by key rows",
    ),
    BlindCase(
        CHECK,
        "additive_minus_1e9",
        additive_minus_1e9,
        "mistake",
        "I added (~mask) * -1e9 to the scores; a query with no visible key spreads its "
        "weight over the padding",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_left_on",
        functional_dropout_left_on,
        "mistake",
        "I added F.dropout(weights, p=0.1) before @ v, not knowing F.dropout is always on",
    ),
    BlindCase(
        CHECK,
        "values_and_keys_swapped",
        values_and_keys_swapped,
        "mistake",
        "I scored the queries against v and mixed k, swapping keys and values",
    ),
    BlindCase(
        CHECK,
        "einsum_version",
        einsum_version,
        "correct",
        "both products written with einsum, scale as d ** -0.5",
    ),
    BlindCase(
        CHECK,
        "prescaled_float64",
        prescaled_float64,
        "correct",
        "q and k each divided by d ** 0.25 in float64, results cast back",
    ),
    BlindCase(
        CHECK,
        "flatten_to_bmm",
        flatten_to_bmm,
        "correct",
        "leading axes flattened so that bmm works for any rank, then viewed back; "
        "optional scale argument",
    ),
]
