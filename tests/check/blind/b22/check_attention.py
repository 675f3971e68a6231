"""Blind set B22, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (my_masked_softmax of the cell before), shared by the mistakes."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_no_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    w = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return w @ v, w


def att_scale_by_dv(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
    return w @ v, w


def att_divide_by_dk(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    w = _masked_softmax(q @ k.transpose(-2, -1) / k.shape[-1], mask)
    return w @ v, w


def att_scale_by_tk(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = k.shape[-2]  # picked the wrong axis for the key size
    w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return w @ v, w


def att_multiply_sqrt(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    w = _masked_softmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return w @ v, w


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    w = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return w @ v, w


def att_softmax_over_queries(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    w = _masked_softmax(scores.transpose(-2, -1), None if mask is None else mask.transpose(-2, -1))
    w = w.transpose(-2, -1)  # normalized each key's column
    return w @ v, w


def att_transpose_1_2(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    w = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)  # (B, T, D) inputs
    return w @ v, w


def att_inverted_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    w = _masked_softmax(scores, None if mask is None else mask.logical_not())
    return w @ v, w


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        w = w.masked_fill(~mask, 0.0)
    return w @ v, w


def att_weights_transposed_for_v(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return w.transpose(-2, -1) @ v, w


def att_returns_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return w @ v


def att_fill_minus_1e4(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e4)  # fits float16
    w = scores.softmax(dim=-1)
    return w @ v, w


# ---------------------------------------------------------------- correct variants


def att_einsum(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    w = _masked_softmax(scores, mask)
    return torch.einsum("...ij,...jd->...id", w, v), w


def att_quarter_power(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0
) -> tuple:
    s = q.shape[-1] ** -0.25  # half the scale on each side
    scores = torch.matmul(q * s, (k * s).mT)
    w = _masked_softmax(scores, mask)
    out = torch.matmul(torch.dropout(w, dropout_p, True) if dropout_p else w, v)
    return out, w


def att_where_float64(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()  # exact inside, back to the input dtype
    scores = q64 @ k64.transpose(-1, -2) / math.sqrt(q.size(-1))
    if mask is not None:
        visible = mask.expand_as(scores)
        scores = torch.where(visible, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
        empty = ~visible.any(-1, keepdim=True)
        w = torch.where(empty, 0.0, scores.masked_fill(empty, 0.0).softmax(-1))
    else:
        w = scores.softmax(-1)
    return (w @ v64).to(dtype), w.to(dtype)


CASES = [
    BlindCase(CHECK, "no_scale", att_no_scale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_by_dv",
        att_scale_by_dv,
        "mistake",
        "I took the size for the scale from v instead of q/k.",
    ),
    BlindCase(
        CHECK, "divide_by_dk", att_divide_by_dk, "mistake", "I divided by d_k, not its square root."
    ),
    BlindCase(
        CHECK,
        "scale_by_tk",
        att_scale_by_tk,
        "mistake",
        "I read d_k as k.shape[-2], the number of keys.",
    ),
    BlindCase(
        CHECK,
        "multiply_sqrt",
        att_multiply_sqrt,
        "mistake",
        "I multiplied by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I scaled the weights after the softmax instead of the scores before.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        att_softmax_over_queries,
        "mistake",
        "I normalized each key's column (over the queries).",
    ),
    BlindCase(
        CHECK,
        "transpose_1_2",
        att_transpose_1_2,
        "mistake",
        "I wrote k.transpose(1, 2), right for (B, T, D) only.",
    ),
    BlindCase(
        CHECK,
        "inverted_mask",
        att_inverted_mask,
        "mistake",
        "I treated True in the mask as 'blocked'.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I zeroed the masked weights after the softmax; rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed_for_v",
        att_weights_transposed_for_v,
        "mistake",
        "I multiplied weights^T by v.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        att_returns_out_only,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e4",
        att_fill_minus_1e4,
        "mistake",
        "I filled masked scores with -1e4 and applied a plain softmax.",
    ),
    BlindCase(
        CHECK, "einsum", att_einsum, "correct", "einsum for both products, scale as ** -0.5."
    ),
    BlindCase(
        CHECK,
        "quarter_power",
        att_quarter_power,
        "correct",
        "d_k ** -0.25 on q and on k; an optional dropout_p argument.",
    ),
    BlindCase(
        CHECK,
        "where_float64",
        att_where_float64,
        "correct",
        "Computed in float64 with torch.where, cast back to the input dtype.",
    ),
]
