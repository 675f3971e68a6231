"""Blind set B15, check_attention (chapter 6): scaled dot-product attention."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msm(scores: Tensor, mask: Tensor | None) -> Tensor:
    """The reader's own right masked softmax."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_no_scale(q, k, v, mask=None):
    w = _msm(q @ k.transpose(-2, -1), mask)
    return w @ v, w


def att_scale_sqrt_tk(q, k, v, mask=None):
    w = _msm(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2]), mask)  # sqrt of the keys' count
    return w @ v, w


def att_times_sqrt(q, k, v, mask=None):
    w = _msm(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return w @ v, w


def att_keys_first(q, k, v, mask=None):
    w = _msm(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return w @ v, w.transpose(-2, -1)  # one column per query, as I drew it


def att_polarity(q, k, v, mask=None):
    w = _msm(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), None if mask is None else ~mask)
    return w @ v, w


def att_minus_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    w = torch.softmax(scores, dim=-1)
    return w @ v, w


def att_out_only(q, k, v, mask=None):
    w = _msm(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return w @ v


def att_mask_after_softmax(q, k, v, mask=None):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        w = w * mask
    return w @ v, w


def att_scale_after_softmax(q, k, v, mask=None):
    w = _msm(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])  # scaled the weights
    return w @ v, w


def att_bmm(q, k, v, mask=None):
    w = _msm(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1]), mask)
    return torch.bmm(w, v), w  # only 3-D batches


def att_softmax_dim1(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 1 = keys for (T_q, T_k), I thought
    return w @ v, w


# ---------------------------------------------------------------- correct variants


def att_einsum(q, k, v, mask=None):
    scores = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    w = _msm(scores, mask)
    return torch.einsum("...ij,...jd->...id", w, v), w


def att_scale_keys(q, k, v, mask=None, scale: float | None = None):
    """The scale folded into k; matmul and mT; an optional scale argument."""
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = torch.matmul(q, (k * scale).mT)
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        dead = torch.isinf(scores).all(-1, keepdim=True)
        w = scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)
    else:
        w = scores.softmax(-1)
    return torch.matmul(w, v), w


def att_where_exp(q, k, v, mask=None):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    scores = scores - scores.amax(-1, keepdim=True)
    e = scores.exp() if mask is None else torch.where(mask, scores.exp(), 0.0)
    w = e / e.sum(-1, keepdim=True).clamp_min(1e-30)
    return w @ v, w


CASES = [
    BlindCase(CHECK, "no_scale", att_no_scale, "mistake", "I left out the 1/sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_sqrt_num_keys",
        att_scale_sqrt_tk,
        "mistake",
        "I divided by the square root of the number of keys, k.shape[-2].",
    ),
    BlindCase(
        CHECK,
        "times_sqrt_dk",
        att_times_sqrt,
        "mistake",
        "I multiplied by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "weights_keys_by_queries",
        att_keys_first,
        "mistake",
        "I returned the weights transposed, (T_k, T_q), one column per query.",
    ),
    BlindCase(
        CHECK, "mask_polarity", att_polarity, "mistake", "I inverted the mask: True = blocked."
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        att_minus_1e9,
        "mistake",
        "I filled with -1e9; a query with no visible key spreads over the padding.",
    ),
    BlindCase(
        CHECK, "returns_out_only", att_out_only, "mistake", "I return only out, not (out, weights)."
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I zeroed masked weights after the softmax without renormalising.",
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
        "bmm_3d_only",
        att_bmm,
        "mistake",
        "I used torch.bmm and transpose(1, 2), which fails for (B, H, T, D) inputs.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim1",
        att_softmax_dim1,
        "mistake",
        "I took softmax(dim=1), thinking of (T_q, T_k), but with a batch axis it is T_q.",
    ),
    BlindCase(
        CHECK, "einsum", att_einsum, "correct", "einsum for both products; scale as d_k ** -0.5."
    ),
    BlindCase(
        CHECK,
        "scale_on_keys",
        att_scale_keys,
        "correct",
        "The scale multiplied into k, k.mT, an optional scale argument, isinf for empty rows.",
    ),
    BlindCase(
        CHECK,
        "where_exp",
        att_where_exp,
        "correct",
        "Shifted exp zeroed with torch.where and divided by a clamped sum.",
    ),
]
