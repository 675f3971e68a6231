"""Blind set B34, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """My masked softmax from the cell above (right)."""
    if mask is None:
        return scores.softmax(-1)
    has = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has, 0.0)
    return scores.softmax(-1).masked_fill(~has, 0.0)


# ---------------------------------------------------------------- mistakes


def att_sqrt_of_dv(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.size(-1))
    w = _msoftmax(scores, mask)
    return w @ v, w


def att_no_sqrt(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.size(-1)  # divide by d_k
    w = _msoftmax(scores, mask)
    return w @ v, w


def att_multiply_sqrt(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.size(-1))
    w = _msoftmax(scores, mask)
    return w @ v, w


def att_scale_by_tq(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-2))  # size(-2) is the length
    w = _msoftmax(scores, mask)
    return w @ v, w


def att_softmax_before_scale(q, k, v, mask=None):
    w = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.size(-1))
    return w @ v, w


def att_weights_transposed(q, k, v, mask=None):
    w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), mask)
    return w @ v, w.transpose(-2, -1)  # (T_k, T_q) for plotting


def att_mask_polarity(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    w = _msoftmax(scores, None if mask is None else mask.logical_not())
    return w @ v, w


def att_mask_ignored(q, k, v, mask=None):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
    return w @ v, w  # I'll add the mask later


def att_minus_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    w = scores.softmax(-1)
    return w @ v, w


def att_out_only(q, k, v, mask=None):
    w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), mask)
    return w @ v  # the weights are only for plots


def att_bmm_3d(q, k, v, mask=None):
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))  # (B, T_q, T_k)
    w = _msoftmax(scores, mask)
    return torch.bmm(w, v), w


def att_v_times_w(q, k, v, mask=None):
    w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), mask)
    return w.transpose(-2, -1) @ v, w  # weights (T_k, T_q) then times v? I mixed it up


def att_sdpa_no_weights(q, k, v, mask=None):
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
    return out, w  # the weights without the mask, for plotting


# ---------------------------------------------------------------- correct variants


def att_einsum(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    w = _msoftmax(scores, mask)
    return torch.einsum("...qk,...kd->...qd", w, v), w


def att_prescale_q(q, k, v, mask=None):
    q = q / math.sqrt(q.shape[-1])  # scale the queries first (a new tensor)
    scores = torch.matmul(q, k.transpose(-1, -2))
    if mask is None:
        w = F.softmax(scores, dim=-1)
    else:
        visible = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        w = F.softmax(torch.where(visible, scores, torch.zeros_like(scores)), dim=-1)
        w = torch.where(visible, w, torch.zeros_like(w))
    return torch.matmul(w, v), w


def att_with_scale_arg(q, k, v, mask=None, scale=None):
    scale = 1.0 / math.sqrt(k.size(-1)) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)).mul_(scale)  # in place on my own product
    w = _msoftmax(scores, mask)
    return w @ v, w


CASES = [
    BlindCase(
        CHECK, "scale_by_sqrt_dv", att_sqrt_of_dv, "mistake", "I divided by sqrt(v.size(-1))"
    ),
    BlindCase(CHECK, "divide_by_dk", att_no_sqrt, "mistake", "I divided by d_k, not sqrt(d_k)"),
    BlindCase(
        CHECK,
        "multiply_by_sqrt",
        att_multiply_sqrt,
        "mistake",
        "I multiplied by sqrt(d_k) instead of dividing",
    ),
    BlindCase(CHECK, "scale_by_length", att_scale_by_tq, "mistake", "I took q.size(-2) as d_k"),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_softmax_before_scale,
        "mistake",
        "I scaled the weights after the softmax instead of the scores before it",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        att_weights_transposed,
        "mistake",
        "I returned the weights transposed, keys by queries",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        att_mask_polarity,
        "mistake",
        "I inverted the mask, thinking True means blocked as in nn.MultiheadAttention",
    ),
    BlindCase(CHECK, "mask_ignored", att_mask_ignored, "mistake", "I never used the mask argument"),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        att_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9 instead of calling my masked softmax",
    ),
    BlindCase(
        CHECK, "only_output", att_out_only, "mistake", "I returned only the output, not the pair"
    ),
    BlindCase(
        CHECK,
        "bmm_three_dims",
        att_bmm_3d,
        "mistake",
        "I used torch.bmm, which only takes 3-D batches",
    ),
    BlindCase(
        CHECK, "wT_times_v", att_v_times_w, "mistake", "I multiplied the transposed weights by v"
    ),
    BlindCase(
        CHECK,
        "sdpa_unmasked_weights",
        att_sdpa_no_weights,
        "mistake",
        "I used F.scaled_dot_product_attention and recomputed the weights without the mask",
    ),
    BlindCase(CHECK, "einsum", att_einsum, "correct", "I used einsum and d_k ** -0.5"),
    BlindCase(
        CHECK,
        "prescaled_queries",
        att_prescale_q,
        "correct",
        "I divided the queries by sqrt(d_k) before the product and masked with where",
    ),
    BlindCase(
        CHECK,
        "optional_scale",
        att_with_scale_arg,
        "correct",
        "I added an optional scale argument and scaled my own scores in place",
    ),
]
