"""Blind set B20, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """The reader's own (right) masked softmax from the cell before."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_no_scale(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_scale_dv(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
    return weights @ v, weights


def att_scale_times_sqrt(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_scale_by_keys_count(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(k.size(-2)), mask)  # k.size(1)?
    return weights @ v, weights


def att_softmax_queries(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2)
    weights = torch.nan_to_num(weights)
    return weights @ v, weights


def att_scale_after_softmax(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_returns_swapped(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights, weights @ v


def att_mask_polarity(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, None if mask is None else ~mask)  # True = padding, hide it
    return weights @ v, weights


def att_mask_unused(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)  # masking happens in the data loader
    return weights @ v, weights


def att_fill_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def att_keys_times_queries(q, k, v, mask=None):
    scores = (k @ q.transpose(-2, -1)).transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores.transpose(-2, -1), mask)  # rows = keys
    return weights.transpose(-2, -1) @ v, weights.transpose(-2, -1)


def att_scores_returned(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return weights @ v, scores  # the attention map to plot


def att_transpose_last_two_of_3d(q, k, v, mask=None):
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])  # batched matmul
    weights = _msoftmax(scores, mask)
    return torch.bmm(weights, v), weights


# ---------------------------------------------------------------- correct variants


def att_einsum(q, k, v, mask=None):
    d = q.shape[-1]
    scores = torch.einsum("...id,...jd->...ij", q, k) / d**0.5
    weights = _msoftmax(scores, mask)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def att_scale_split(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[Tensor, Tensor]:
    s = q.size(-1) ** -0.25  # half of the scale on each side
    scores = torch.matmul(q * s, (k * s).mT)
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        rows = mask.any(-1, keepdim=True)
        weights = F.softmax(scores.masked_fill(~rows, 0), -1) * rows
    else:
        weights = F.softmax(scores, -1)
    return torch.matmul(F.dropout(weights, dropout_p) if dropout_p else weights, v), weights


def att_float64(q, k, v, mask=None):
    scores = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(k.shape[-1])
    weights = _msoftmax(scores, mask)
    out = weights @ v.double()
    return out.to(v.dtype), weights.to(q.dtype)


def att_where_zero(q, k, v, mask=None):
    scores = q.matmul(k.transpose(-2, -1)).div(math.sqrt(q.shape[-1]))
    if mask is None:
        weights = scores.softmax(-1)
    else:
        neg = torch.tensor(float("-inf"), dtype=scores.dtype)
        weights = torch.where(mask, scores, neg).softmax(-1)
        weights = torch.where(torch.isnan(weights), torch.zeros_like(weights), weights)
    return weights.matmul(v), weights


CASES = [
    BlindCase(CHECK, "no_scale", att_no_scale, "mistake", "I forgot the 1/sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_sqrt_dv",
        att_scale_dv,
        "mistake",
        "I scaled by sqrt of v's last dimension.",
    ),
    BlindCase(
        CHECK,
        "times_sqrt_dk",
        att_scale_times_sqrt,
        "mistake",
        "I multiplied by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "scale_by_num_keys",
        att_scale_by_keys_count,
        "mistake",
        "I took k.size(-2) for d_k, which is the number of keys.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        att_softmax_queries,
        "mistake",
        "My softmax runs over dim=-2.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax.",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        att_returns_swapped,
        "mistake",
        "I returned (weights, out).",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        att_mask_polarity,
        "mistake",
        "I passed ~mask, thinking True marks padding.",
    ),
    BlindCase(CHECK, "mask_unused", att_mask_unused, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        att_fill_1e9,
        "mistake",
        "I filled masked scores with -1e9, as in the Annotated Transformer.",
    ),
    BlindCase(
        CHECK,
        "keys_as_rows",
        att_keys_times_queries,
        "mistake",
        "I built scores from k q^T and transposed one time too many.",
    ),
    BlindCase(
        CHECK,
        "returns_scores",
        att_scores_returned,
        "mistake",
        "I returned the scores, not the softmax weights, as the second value.",
    ),
    BlindCase(
        CHECK,
        "bmm_3d_only",
        att_transpose_last_two_of_3d,
        "mistake",
        "I used torch.bmm and transpose(1, 2), written for (B, T, D) inputs.",
    ),
    BlindCase(CHECK, "einsum", att_einsum, "correct", "Both products written with einsum."),
    BlindCase(
        CHECK,
        "scale_split_dropout",
        att_scale_split,
        "correct",
        "d^-1/4 on q and on k, .mT, and an optional dropout_p argument (0 by default).",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        att_float64,
        "correct",
        "Scores and weights in float64, cast back to the inputs' dtype.",
    ),
    BlindCase(
        CHECK,
        "where_then_nan_zero",
        att_where_zero,
        "correct",
        "torch.where with -inf, softmax, and the NaN of empty rows set to zero.",
    ),
]
