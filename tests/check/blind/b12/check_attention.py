"""Blind set B12, check_attention (chapter 6): scaled dot-product attention."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_attention"


# ---------------------------------------------------------------- mistakes


def att_dot_T(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = masked_softmax(q @ k.T / math.sqrt(q.shape[-1]), mask)  # k transposed with .T
    return weights @ v, weights


def att_scale_after_softmax(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_times_sqrt(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_mask_after_softmax(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # drop the masked keys
    return weights @ v, weights


def att_unmasked_weights(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = masked_softmax(scores, mask) @ v
    return out, scores.softmax(-1)  # the weights to plot


def att_scale_by_length(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # number of keys
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def att_softmax_dim1(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))
    return weights @ v, weights


def att_where_polarity(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = torch.where(mask, float("-inf"), scores)
    weights = torch.nan_to_num(scores.softmax(-1))
    return weights @ v, weights


def att_sdpa_float_mask(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)
    attn_mask = None if mask is None else mask.to(q.dtype)  # 1 = keep, 0 = drop
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask), weights


def att_scale_q_in_place(q, k, v, mask=None):
    q /= math.sqrt(q.shape[-1])  # scale the queries once
    weights = masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_bmm_3d(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    lead = q.shape[:-2]
    q3 = q.reshape(-1, *q.shape[-2:])
    k3 = k.reshape(-1, *k.shape[-2:])
    v3 = v.reshape(-1, *v.shape[-2:])
    scores = torch.bmm(q3, k3.transpose(1, 2)).div(q.shape[-1] ** 0.5)
    scores = scores.reshape(*lead, *scores.shape[-2:])
    weights = masked_softmax(scores, mask)
    out = torch.bmm(weights.reshape(-1, *weights.shape[-2:]), v3)
    return out.reshape(*lead, *out.shape[-2:]), weights


def att_split_scale(q, k, v, mask=None):
    s = q.shape[-1] ** -0.25  # half the scale on each side
    scores = (q * s) @ (k * s).mT
    if mask is not None:
        blocked = ~mask.expand_as(scores)
        empty = blocked.all(-1, keepdim=True)
        scores = scores.masked_fill(blocked, float("-inf")).masked_fill(empty, 0.0)
        weights = scores.softmax(-1).masked_fill(empty, 0.0)
    else:
        weights = scores.softmax(-1)
    return torch.matmul(weights, v), weights


def att_with_options(q, k, v, mask=None, *, scale: float | None = None, return_scores=False):
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = torch.einsum("...id,...jd->...ij", q, k) * scale
    weights = masked_softmax(scores, mask)
    out = torch.einsum("...ij,...jd->...id", weights, v)
    return (out, weights, scores) if return_scores else (out, weights)


CASES = [
    BlindCase(
        CHECK,
        "dot_T",
        att_dot_T,
        "mistake",
        "I wrote k.T for the transpose, which reverses every axis of a batched k.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax instead of the scores.",
    ),
    BlindCase(
        CHECK,
        "times_sqrt",
        att_times_sqrt,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I took the softmax first and multiplied the weights by the mask, so rows do not sum to 1.",
    ),
    BlindCase(
        CHECK,
        "unmasked_weights_returned",
        att_unmasked_weights,
        "mistake",
        "I masked for the output but returned an unmasked softmax as the weights.",
    ),
    BlindCase(
        CHECK,
        "scale_by_num_keys",
        att_scale_by_length,
        "mistake",
        "I divided by sqrt of k.shape[-2], the number of keys, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim1",
        att_softmax_dim1,
        "mistake",
        "I took the softmax over dim=1, which is the heads or queries axis, not the keys.",
    ),
    BlindCase(
        CHECK,
        "where_polarity",
        att_where_polarity,
        "mistake",
        "I wrote torch.where(mask, -inf, scores), hiding the keys the mask allows.",
    ),
    BlindCase(
        CHECK,
        "sdpa_float_mask",
        att_sdpa_float_mask,
        "mistake",
        "I passed the mask to F.scaled_dot_product_attention as floats, which adds 1/0 "
        "to the scores instead of blocking.",
    ),
    BlindCase(
        CHECK,
        "scale_q_in_place",
        att_scale_q_in_place,
        "mistake",
        "I scaled q in place with /=, which changes the caller's queries.",
    ),
    BlindCase(
        CHECK,
        "bmm_3d",
        att_bmm_3d,
        "correct",
        "Leading axes flattened to use torch.bmm, then reshaped back.",
    ),
    BlindCase(
        CHECK,
        "split_scale",
        att_split_scale,
        "correct",
        "d_k^-1/4 applied to both q and k, k.mT, own empty-row handling.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_options",
        att_with_options,
        "correct",
        "einsum products; keyword-only scale and return_scores with defaults.",
    ),
]
