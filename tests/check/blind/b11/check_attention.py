"""Blind set B11, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (the reader's own, from the cell above)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_scale_by_length(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of the number of keys
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_scale_q_and_k(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = q.shape[-1]
    q, k = q / math.sqrt(d), k / math.sqrt(d)  # scale both so their product is scaled
    weights = _msoftmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_multiply_sqrt(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_softmax_dim1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(F.softmax(scores, dim=1))
    return weights @ v, weights


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights


def att_mask_polarity(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask == 0  # positions to hide
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def att_keys_as_values(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights


def att_only_out(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v


def att_no_grad_weights(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    with torch.no_grad():  # the weights are just probabilities
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_nan_empty_rows(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights = scores.softmax(dim=-1)
    return torch.matmul(weights, v), weights


def att_fill_zero(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = scores.softmax(-1)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_einsum_quarter_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = q.shape[-1]
    scores = torch.einsum("...id,...jd->...ij", q / d**0.25, k / d**0.25)
    weights = _msoftmax(scores, mask)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def att_float64_inside(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Computed in float64 and cast back to the inputs' dtype."""
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()
    scores = q64.matmul(k64.mT) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        fill = torch.finfo(scores.dtype).min
        scores = scores.masked_fill(~mask, fill)
        weights = scores.softmax(-1) * mask.any(-1, keepdim=True)
        weights = weights * mask
    else:
        weights = scores.softmax(-1)
    return (weights @ v64).to(dtype), weights.to(dtype)


def att_options(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    scale: float | None = None,
    need_weights: bool = True,
) -> tuple:
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.baddbmm(
        torch.zeros(1, dtype=q.dtype),
        q.reshape(-1, *q.shape[-2:]),
        k.reshape(-1, *k.shape[-2:]).transpose(1, 2),
        alpha=scale,
    ).reshape(*q.shape[:-1], k.shape[-2])
    weights = _msoftmax(scores, mask)
    out = weights @ v
    return (out, weights) if need_weights else (out, None)


CASES = [
    BlindCase(
        CHECK,
        "scale_by_num_keys",
        att_scale_by_length,
        "mistake",
        "I divided by the square root of the number of keys, k.shape[-2], not of d_k.",
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
        "q_and_k_each_by_sqrt",
        att_scale_q_and_k,
        "mistake",
        "I divided q and k each by sqrt(d_k), which divides the scores by d_k.",
    ),
    BlindCase(
        CHECK,
        "multiply_by_sqrt",
        att_multiply_sqrt,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        att_softmax_dim1,
        "mistake",
        "I wrote softmax(dim=1), which is the queries for (B, T, T) and the heads for "
        "(B, H, T, T).",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I multiplied the weights by the mask after the softmax without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        att_mask_polarity,
        "mistake",
        "I turned the mask into 'positions to hide' with mask == 0 before my masked softmax.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        att_keys_as_values,
        "mistake",
        "I multiplied the weights by k instead of v.",
    ),
    BlindCase(
        CHECK,
        "returns_only_out",
        att_only_out,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "weights_under_no_grad",
        att_no_grad_weights,
        "mistake",
        "I computed the weights under torch.no_grad(), so no gradient flows to q and k.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        att_nan_empty_rows,
        "mistake",
        "I masked with -inf and a plain softmax, so a query with no visible key gives NaN.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        att_fill_zero,
        "mistake",
        "I set masked scores to 0, which is not small enough to hide them.",
    ),
    BlindCase(
        CHECK,
        "einsum_fourth_root_scale",
        att_einsum_quarter_scale,
        "correct",
        "q and k each divided by d_k ** 0.25, einsum for both products.",
    ),
    BlindCase(
        CHECK,
        "float64_inside_finfo_fill",
        att_float64_inside,
        "correct",
        "Computed in float64 with the finfo minimum as the fill, weights multiplied by the mask "
        "(so empty rows are 0), cast back to the input dtype.",
    ),
    BlindCase(
        CHECK,
        "baddbmm_with_options",
        att_options,
        "correct",
        "torch.baddbmm on flattened batches with alpha = scale; extra scale and need_weights "
        "arguments with defaults.",
    ),
]
