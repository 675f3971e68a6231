"""Blind set B13, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes made elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_no_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_scale_by_length(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of the number of keys
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def att_times_sqrt(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def att_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
    weights = _msoftmax(scores, mask)
    return torch.bmm(weights, v), weights


def att_weights_transposed_for_v(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple:
    scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_k, T_q): keys as rows
    if mask is not None:
        scores = scores.masked_fill(~mask.transpose(-2, -1), float("-inf"))
    weights = torch.nan_to_num(scores.softmax(dim=-2))  # over the keys, now the rows
    return weights.transpose(-2, -1) @ v, weights


def att_inverted_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    weights = torch.nan_to_num(scores.softmax(-1))
    return weights @ v, weights


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def att_fill_large_negative(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    return weights @ v, weights


def att_softmax_dim1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 1 = keys, I thought
    return weights @ v, weights


def att_returns_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v


def att_returns_scores(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return weights @ v, scores  # the "attention" before the softmax


def att_mixes_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights  # keys and values are the same thing in the pictures


# ---------------------------------------------------------------- correct variants


def att_einsum(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
    weights = _msoftmax(scores, mask)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def att_split_scale(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: float | None = None
) -> tuple:
    s = (1 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = torch.matmul(q * math.sqrt(s), (k * math.sqrt(s)).movedim(-1, -2))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        empty = ~mask.any(-1, keepdim=True)
        scores = scores.masked_fill(empty, 0.0)
        weights = scores.softmax(-1).masked_fill(empty, 0.0)
    else:
        weights = scores.softmax(-1)
    return torch.matmul(weights, v), weights


def att_exp_normalise(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.mT / math.sqrt(k.shape[-1])
    allowed = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    top = torch.nan_to_num(top, neginf=0.0).detach()
    e = torch.exp(scores - top) * allowed
    total = e.sum(-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return weights @ v, weights


CASES = [
    BlindCase(CHECK, "no_scale", att_no_scale, "mistake", "I did not scale the scores."),
    BlindCase(
        CHECK,
        "scale_by_sqrt_Tk",
        att_scale_by_length,
        "mistake",
        "I divided by the square root of the number of keys instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "times_sqrt_dk",
        att_times_sqrt,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "bmm_only_3d",
        att_bmm,
        "mistake",
        "I used torch.bmm, which only takes 3-D tensors, so a head axis breaks it.",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        att_weights_transposed_for_v,
        "mistake",
        "I computed k q^T and returned the weights keys-by-queries.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        att_inverted_mask,
        "mistake",
        "I filled -inf where the mask is True.",
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
        "fill_finfo_min",
        att_fill_large_negative,
        "mistake",
        "I filled with torch.finfo(dtype).min, so a query with no visible key averages "
        "over all keys instead of giving zeros.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        att_softmax_dim1,
        "mistake",
        "I took the softmax over dim=1, thinking it was the keys.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        att_returns_out_only,
        "mistake",
        "I returned only out, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "returns_scores",
        att_returns_scores,
        "mistake",
        "I returned the scaled scores (before the softmax) as the weights.",
    ),
    BlindCase(
        CHECK,
        "mixes_keys",
        att_mixes_keys,
        "mistake",
        "I multiplied the weights by k instead of v.",
    ),
    BlindCase(
        CHECK, "einsum", att_einsum, "correct", "einsum for both products, scale as d_k ** -0.5."
    ),
    BlindCase(
        CHECK,
        "split_scale_option",
        att_split_scale,
        "correct",
        "sqrt of the scale applied to q and to k, movedim for the transpose; an optional "
        "scale argument.",
    ),
    BlindCase(
        CHECK,
        "exp_normalise",
        att_exp_normalise,
        "correct",
        "k.mT, exp(scores - max) times the mask, divided by the row sum.",
    ),
]
