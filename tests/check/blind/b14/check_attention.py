"""Blind set B14, check_attention (chapter 6): scaled dot-product attention."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def _scores(q: Tensor, k: Tensor) -> Tensor:
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


# ---------------------------------------------------------------- mistakes


def att_scale_by_num_keys(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of the number of keys
    w = _msoftmax(scores, mask)
    return w @ v, w


def att_scale_after_softmax(q, k, v, mask=None):
    w = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return w @ v, w


def att_multiply_by_sqrt(q, k, v, mask=None):
    w = _msoftmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return w @ v, w


def att_weights_transposed(q, k, v, mask=None):
    w = _msoftmax(_scores(q, k), mask)
    return w @ v, w.transpose(-2, -1)  # keys along the rows, for plotting


def att_softmax_dim1(q, k, v, mask=None):
    scores = _scores(q, k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.nan_to_num(F.softmax(scores, dim=1))
    return w @ v, w


def att_polarity(q, k, v, mask=None):
    w = _msoftmax(_scores(q, k), None if mask is None else mask == 0)
    return w @ v, w


def att_minus_1e9(q, k, v, mask=None):
    scores = _scores(q, k)
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    w = scores.softmax(-1)
    return w @ v, w


def att_returns_out_only(q, k, v, mask=None):
    return _msoftmax(_scores(q, k), mask) @ v


def att_weights_masked_after(q, k, v, mask=None):
    w = _scores(q, k).softmax(-1)
    if mask is not None:
        w = w.masked_fill(~mask, 0.0)  # masked keys get weight 0
    return w @ v, w


def att_detached_weights(q, k, v, mask=None):
    with torch.no_grad():  # the weights are only for plotting
        w = _msoftmax(_scores(q, k), mask)
    return w @ v, w


def att_scale_by_dv(q, k, v, mask=None):
    w = _msoftmax(q @ k.transpose(-2, -1) / v.shape[-1] ** 0.5, mask)
    return w @ v, w


# ---------------------------------------------------------------- correct variants


def att_einsum_where(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = torch.where(mask, scores, float("-inf"))
        dead = ~mask.any(-1, keepdim=True)
        scores = torch.where(dead, 0.0, scores)
        w = torch.where(dead, 0.0, scores.softmax(-1))
    else:
        w = scores.softmax(-1)
    return torch.einsum("...ij,...jd->...id", w, v), w


def att_scale_in_keys(q, k, v, mask=None, dropout_p: float = 0.0):
    """The scale folded into k; the softmax written as its own helper."""
    k_scaled = k / math.sqrt(k.size(-1))
    scores = torch.matmul(q, k_scaled.mT)
    w = _msoftmax(scores, mask)
    return torch.matmul(F.dropout(w, dropout_p) if dropout_p else w, v), w


def att_additive_bias(q, k, v, mask=None):
    """The mask turned into an additive bias of 0 / -inf, as in nn.Transformer."""
    scores = _scores(q, k)
    if mask is None:
        w = torch.softmax(scores, dim=-1)
    else:
        bias = torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
        empty = ~mask.any(dim=-1, keepdim=True)
        w = torch.softmax((scores + bias).masked_fill(empty, 0.0), dim=-1)
        w = w.masked_fill(empty, 0.0)
    return w @ v, w


CASES = [
    BlindCase(
        CHECK,
        "scale_by_num_keys",
        att_scale_by_num_keys,
        "mistake",
        "I divided by the square root of the number of keys, k.shape[-2].",
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
        "multiply_by_sqrt",
        att_multiply_by_sqrt,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        att_weights_transposed,
        "mistake",
        "I returned the weights transposed, keys along the rows, to plot them.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim1",
        att_softmax_dim1,
        "mistake",
        "I wrote softmax(dim=1), which is the keys for (T_q, T_k) but not for a batch.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        att_polarity,
        "mistake",
        "I passed mask == 0 to the softmax, reading True as blocked.",
    ),
    BlindCase(
        CHECK,
        "minus_1e9",
        att_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9; a query with no visible key averages the padding.",
    ),
    BlindCase(
        CHECK,
        "out_only",
        att_returns_out_only,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_weights_masked_after,
        "mistake",
        "I zeroed the masked weights after the softmax, so the rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "no_grad_weights",
        att_detached_weights,
        "mistake",
        "I computed the weights under torch.no_grad() since they are for plotting.",
    ),
    BlindCase(
        CHECK,
        "scale_by_dv",
        att_scale_by_dv,
        "mistake",
        "I used the values' width d_v in the scale.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        att_einsum_where,
        "correct",
        "einsum for both products and torch.where for the mask and the empty rows.",
    ),
    BlindCase(
        CHECK,
        "scale_in_keys",
        att_scale_in_keys,
        "correct",
        "k divided by sqrt(d_k) before the product, k.mT; extra dropout_p defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "additive_bias",
        att_additive_bias,
        "correct",
        "The mask as an additive 0 / -inf bias on the scores; empty rows set to zero.",
    ),
]
