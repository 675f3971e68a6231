"""Blind set B21, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (the reader's own from the cell above)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_no_scale(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_scale_dv(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
    return weights @ v, weights


def att_times_sqrt(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_divide_by_d(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) / k.shape[-1], mask)
    return weights @ v, weights


def att_softmax_queries(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2).nan_to_num(0.0)
    return weights @ v, weights


def att_transpose_1_2(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_mask_ignored(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def att_mask_inverted(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, None if mask is None else mask.logical_not())
    return weights @ v, weights


def att_fill_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def att_weights_first(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights, weights @ v


def att_scale_after_softmax(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_mask_after_softmax(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def att_weights_transposed_for_v(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights.transpose(-2, -1) @ v, weights


def att_detached_weights(q, k, v, mask=None):
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask).detach()
    return weights @ v, weights  # detached so the weights can be plotted


# ---------------------------------------------------------------- correct variants


def att_einsum(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.size(-1) ** 0.5
    weights = _msoftmax(scores, mask)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


def att_scale_q_first(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    weights = _msoftmax(torch.matmul(q * scale, k.mT), mask)
    dropped = torch.nn.functional.dropout(weights, dropout_p) if dropout_p > 0 else weights
    return torch.matmul(dropped, v), weights


def att_float64_inside(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return (weights @ v).to(dtype), weights.to(dtype)


def att_where_fill(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q.matmul(k.transpose(-2, -1)).div(math.sqrt(k.shape[-1]))
    if mask is None:
        weights = scores.softmax(-1)
    else:
        lowest = torch.finfo(scores.dtype).min
        weights = torch.where(mask, scores, lowest).softmax(-1) * mask.any(-1, keepdim=True)
    return weights.matmul(v), weights


CASES = [
    BlindCase(CHECK, "no_scale", att_no_scale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_by_dv",
        att_scale_dv,
        "mistake",
        "I scaled by sqrt(v.shape[-1]), the value size, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "times_sqrt",
        att_times_sqrt,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(CHECK, "divide_by_dk", att_divide_by_d, "mistake", "I divided by d_k, not its root."),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        att_softmax_queries,
        "mistake",
        "I took the softmax over dim=-2.",
    ),
    BlindCase(
        CHECK,
        "transpose_1_2",
        att_transpose_1_2,
        "mistake",
        "I wrote k.transpose(1, 2), which is wrong once there is a head axis.",
    ),
    BlindCase(
        CHECK, "mask_ignored", att_mask_ignored, "mistake", "I never used the mask argument."
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        att_mask_inverted,
        "mistake",
        "I passed mask.logical_not() to my softmax, thinking True meant blocked.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        att_fill_1e9,
        "mistake",
        "I filled masked scores with -1e9 and took a plain softmax; a query with no visible "
        "key then averages the masked values.",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        att_weights_first,
        "mistake",
        "I returned (weights, out).",
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
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I zeroed the masked weights after the softmax, so the rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed_for_v",
        att_weights_transposed_for_v,
        "mistake",
        "I multiplied weights.transpose(-2, -1) with v.",
    ),
    BlindCase(
        CHECK,
        "detached_weights",
        att_detached_weights,
        "mistake",
        "I detached the weights for plotting before using them, so no gradient reaches q, k.",
    ),
    BlindCase(CHECK, "einsum", att_einsum, "correct", "einsum for both products."),
    BlindCase(
        CHECK,
        "scale_q_first_options",
        att_scale_q_first,
        "correct",
        "q scaled before the product, k.mT, extra dropout_p and scale arguments.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        att_float64_inside,
        "correct",
        "Computed in float64 and cast back to the input dtype.",
    ),
    BlindCase(
        CHECK,
        "where_finfo_min",
        att_where_fill,
        "correct",
        "torch.where with the dtype's lowest value, rows with no key multiplied by 0.",
    ),
]
