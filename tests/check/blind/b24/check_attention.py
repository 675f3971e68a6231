"""Blind set B24, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_scale_multiplied(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def att_scale_by_num_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt(T_k)
    weights = _msoftmax(scores, mask)
    return weights @ v, weights


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_scale_on_output(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1), mask)
    return weights @ v / math.sqrt(q.shape[-1]), weights


def att_softmax_dim1(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 0 is the batch
    return weights @ v, weights


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def att_train_dropout(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return F.dropout(weights, p=0.1) @ v, weights  # dropout on the weights, as in the paper


def att_no_guard(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def att_returns_scores(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, mask)
    return weights @ v, scores  # the scores are what I wanted to look at


def att_mask_polarity(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _msoftmax(scores, None if mask is None else mask.logical_not())
    return weights @ v, weights


def att_q_scaled_in_place(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    q /= math.sqrt(q.shape[-1])  # scale the queries once
    weights = _msoftmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_mask_required(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> tuple:
    weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_flattened_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """Leading axes broadcast and flattened, so that torch.bmm does the two products."""
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    q = q.expand(*lead, *q.shape[-2:]).reshape(-1, *q.shape[-2:])
    k = k.expand(*lead, *k.shape[-2:]).reshape(-1, *k.shape[-2:])
    v = v.expand(*lead, *v.shape[-2:]).reshape(-1, *v.shape[-2:])
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])  # (N, T_q, T_k)
    if mask is not None:
        m = mask.expand(*lead, *scores.shape[-2:]).reshape(scores.shape)
        scores = scores.masked_fill(~m, float("-inf"))
        empty = ~m.any(dim=-1, keepdim=True)
        weights = scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
    else:
        weights = scores.softmax(-1)
    out = torch.bmm(weights, v)
    return out.reshape(*lead, *out.shape[-2:]), weights.reshape(*lead, *weights.shape[-2:])


def att_sdpa_out(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """out from F.scaled_dot_product_attention (a row with no key kept finite, then zeroed)."""
    scores = torch.matmul(q, k.mT) / math.sqrt(q.size(-1))
    if mask is None:
        weights = scores.softmax(-1)
        return F.scaled_dot_product_attention(q, k, v), weights
    has_key = mask.any(-1, keepdim=True)
    safe = mask | ~has_key  # a row with no visible key may look at everything, then is zeroed
    weights = scores.masked_fill(~safe, float("-inf")).softmax(-1) * has_key
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe) * has_key
    return out, weights


def att_scaled_keys(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0
) -> tuple[Tensor, Tensor]:
    """The scale folded into the keys; the weights with a -inf fill and torch.where for rows."""
    scores = q @ (k / k.shape[-1] ** 0.5).transpose(-1, -2)
    if mask is not None:
        scores = torch.where(mask, scores, float("-inf"))
        any_key = mask.any(-1, keepdim=True)
        scores = torch.where(any_key, scores, 0.0)
        weights = torch.where(any_key, scores.softmax(-1), 0.0)
    else:
        weights = scores.softmax(-1)
    mixed = F.dropout(weights, p=dropout_p) if dropout_p else weights
    return mixed @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "scale_multiplied",
        att_scale_multiplied,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "scale_by_num_keys",
        att_scale_by_num_keys,
        "mistake",
        "I divided by sqrt(k.shape[-2]), the number of keys, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax instead of the scores before.",
    ),
    BlindCase(
        CHECK,
        "scale_on_output",
        att_scale_on_output,
        "mistake",
        "I put the 1/sqrt(d_k) on the output: softmax(q k^T) v / sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        att_softmax_dim1,
        "mistake",
        "I took the softmax over dim=1 (dim 0 being the batch): the queries for 3-D inputs, the "
        "heads for 4-D ones.",
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
        "dropout_always_on",
        att_train_dropout,
        "mistake",
        "I added F.dropout(weights, p=0.1), which drops even outside training.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        att_no_guard,
        "mistake",
        "I filled -inf and took the softmax; a query with no visible key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "returns_scores",
        att_returns_scores,
        "mistake",
        "I return the scaled scores as the second value instead of the weights.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        att_mask_polarity,
        "mistake",
        "I negated the mask before the softmax, as if True meant 'hide'.",
    ),
    BlindCase(
        CHECK,
        "q_scaled_in_place",
        att_q_scaled_in_place,
        "mistake",
        "I scaled q in place with q /= sqrt(d_k), which changes the caller's queries.",
    ),
    BlindCase(
        CHECK,
        "mask_without_default",
        att_mask_required,
        "mistake",
        "I forgot '= None' on mask, so it must always be passed.",
    ),
    BlindCase(
        CHECK,
        "flattened_bmm",
        att_flattened_bmm,
        "correct",
        "Leading axes broadcast and flattened, torch.bmm for both products, reshaped back.",
    ),
    BlindCase(
        CHECK,
        "sdpa_for_out",
        att_sdpa_out,
        "correct",
        "out from F.scaled_dot_product_attention with a mask that never leaves a row empty, "
        "then zeroed there; the weights computed next to it.",
    ),
    BlindCase(
        CHECK,
        "scaled_keys_where",
        att_scaled_keys,
        "correct",
        "The scale on the keys, torch.where for the mask and the empty rows, k.transpose(-1, "
        "-2); an optional dropout_p.",
    ),
]
