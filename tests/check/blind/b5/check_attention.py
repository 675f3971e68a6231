"""Chapter 6, "Your turn": ``attention(q, k, v, mask=None) -> (out, weights)``.

``softmax(q k^T / sqrt(d_k)) v`` with masked keys (mask False) weighted 0; q ``(..., T_q, d_k)``,
k ``(..., T_k, d_k)``, v ``(..., T_k, d_v)``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the learners below (their slips are elsewhere)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


# --- mistakes ---------------------------------------------------------------------------------


def scaled_by_number_of_keys(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of T_k
    weights = _softmax(scores, mask)
    return weights @ v, weights


def scaled_after_softmax(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = _softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def k_dot_T(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    scores = q @ k.T / math.sqrt(q.shape[-1])  # .T reverses every axis of a batched k
    weights = _softmax(scores, mask)
    return weights @ v, weights


def mask_applied_to_weights(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys weigh 0 now
    return weights @ v, weights


def returns_weights_then_out(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights, weights @ v


def d_k_from_shape_1(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    d_k = q.shape[1]  # (T, d_k) in my notes, so d_k is dimension 1
    weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def weights_transposed_before_v(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights.transpose(-2, -1) @ v, weights  # each value gathers from the queries


def bool_mask_added_to_scores(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask.to(scores.dtype)  # an attention mask is added to the scores
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def power_precedence(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / d_k**1 / 2  # meant d_k ** (1 / 2)
    weights = _softmax(scores, mask)
    return weights @ v, weights


def softmax_over_dim_1(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=1)  # dim 1 = the keys of a (T_q, T_k) matrix
    weights = torch.nan_to_num(weights)
    return weights @ v, weights


# --- correct variants -------------------------------------------------------------------------


def with_einsum(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.shape[-1] ** 0.5
    if mask is not None:
        mask = mask.expand_as(scores)
        visible = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~visible, 0.0)
        weights = torch.softmax(scores, dim=-1) * visible
    else:
        weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def queries_scaled_first(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: float | None = None
) -> tuple[Tensor, Tensor]:
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = torch.matmul(q * scale, k.transpose(-1, -2))
    weights = _softmax(scores, mask)
    return torch.matmul(weights, v), weights


def computed_in_float64(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()
    scores = q64 @ k64.mT / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = torch.where(mask, scores, float("-inf"))
        empty = ~mask.any(dim=-1, keepdim=True)
        weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    else:
        weights = torch.softmax(scores, dim=-1)
    return (weights @ v64).to(dtype), weights.to(dtype)


CASES = [
    BlindCase(
        CHECK,
        "scaled_by_number_of_keys",
        scaled_by_number_of_keys,
        "mistake",
        "I divided the scores by the square root of the number of keys T_k instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scaled_after_softmax",
        scaled_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax, scaling the weights instead of the scores.",
    ),
    BlindCase(
        CHECK,
        "k_dot_T",
        k_dot_T,
        "mistake",
        "I wrote k.T, which on a batched tensor reverses all axes instead of swapping the last two.",
    ),
    BlindCase(
        CHECK,
        "mask_applied_to_weights",
        mask_applied_to_weights,
        "mistake",
        "I took the plain softmax and multiplied the weights by the mask afterwards, so the rows "
        "no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_then_out",
        returns_weights_then_out,
        "mistake",
        "I returned (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "d_k_from_shape_1",
        d_k_from_shape_1,
        "mistake",
        "I took d_k as q.shape[1], which is T_q once the queries have a batch axis.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed_before_v",
        weights_transposed_before_v,
        "mistake",
        "I multiplied the transposed weights with v, mixing the values along the queries.",
    ),
    BlindCase(
        CHECK,
        "bool_mask_added_to_scores",
        bool_mask_added_to_scores,
        "mistake",
        "I added the boolean mask (as 0/1) to the scores as if it were an additive -inf mask.",
    ),
    BlindCase(
        CHECK,
        "power_precedence",
        power_precedence,
        "mistake",
        "I wrote d_k**1/2 for the square root, which Python reads as d_k / 2.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_dim_1",
        softmax_over_dim_1,
        "mistake",
        "I took softmax(dim=1), the key axis of a plain (T_q, T_k) matrix but the query axis once "
        "there is a batch axis.",
    ),
    BlindCase(
        CHECK,
        "with_einsum",
        with_einsum,
        "correct",
        "I computed both products with einsum and zeroed the rows without a visible key by "
        "multiplying with a 'visible' flag.",
    ),
    BlindCase(
        CHECK,
        "queries_scaled_first",
        queries_scaled_first,
        "correct",
        "I multiplied q by 1/sqrt(d_k) before the product, with an optional scale argument.",
    ),
    BlindCase(
        CHECK,
        "computed_in_float64",
        computed_in_float64,
        "correct",
        "I computed everything in float64 with .mT and torch.where, and cast back to the "
        "input dtype.",
    ),
]
