"""Blind set B26, check_attention (chapter 6): scaled dot-product attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_full_transpose(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.T / math.sqrt(q.shape[-1])  # k transposed
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_scale_by_num_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = k.shape[-2]  # the number of keys
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d), mask)
    return weights @ v, weights


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_times_sqrt_d(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])  # scaled by sqrt(d_k)
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_mixes_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights  # the weighted sum of the keys


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys weighted 0
    return weights @ v, weights


def att_returns_scores(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, scores  # what each query thinks of each key, to plot


def att_dk_from_axis_2(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.size(2)  # q is (B, T, d_k)
    weights = _masked_softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k), mask)
    return torch.matmul(weights, v), weights


def att_mask_for_heads(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = mask.unsqueeze(1)  # one mask for all the heads
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_dropout_always(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    weights = F.dropout(weights, p=0.1)  # as in the paper
    return weights @ v, weights


def att_scale_q_in_place(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    q /= math.sqrt(q.shape[-1])  # scale once, before the product
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def att_transpose_q(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q.transpose(-2, -1) @ k / math.sqrt(q.shape[-1])  # q^T k
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_flat_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    *lead, T_q, d_k = q.shape
    lead = torch.broadcast_shapes(tuple(lead), k.shape[:-2], v.shape[:-2])
    qf = q.expand(*lead, T_q, d_k).reshape(-1, T_q, d_k)
    kf = k.expand(*lead, *k.shape[-2:]).reshape(-1, *k.shape[-2:])
    vf = v.expand(*lead, *v.shape[-2:]).reshape(-1, *v.shape[-2:])
    scores = torch.bmm(qf, kf.transpose(1, 2)) / math.sqrt(d_k)  # (N, T_q, T_k)
    scores = scores.reshape(*lead, T_q, kf.shape[1])
    weights = _masked_softmax(scores, mask)
    N = weights.reshape(-1, T_q, kf.shape[1]).shape[0]
    out = torch.bmm(weights.reshape(N, T_q, -1), vf.expand(N, *vf.shape[1:]))
    return out.reshape(*weights.shape[:-1], v.shape[-1]), weights


def att_scaled_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    k = k * q.shape[-1] ** -0.5  # the scale on the keys instead
    scores = torch.matmul(q, k.mT)
    if mask is None:
        weights = scores.softmax(-1)
    else:
        weights = torch.nan_to_num(scores.masked_fill(~mask, -math.inf).softmax(-1))
    return torch.matmul(weights, v), weights


def att_sdpa_out(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    if mask is None:
        out = F.scaled_dot_product_attention(q, k, v)
    else:
        has_key = mask.any(-1, keepdim=True)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
        out = out.masked_fill(~has_key, 0.0)  # no visible key: zero output, as the weights say
    return out, weights


CASES = [
    BlindCase(
        CHECK,
        "full_transpose_T",
        att_full_transpose,
        "mistake",
        "I transposed k with k.T, which reverses every axis of a batched tensor.",
    ),
    BlindCase(
        CHECK,
        "scale_by_number_of_keys",
        att_scale_by_num_keys,
        "mistake",
        "I divided by the square root of the number of keys, k.shape[-2].",
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
        "times_sqrt_dk",
        att_times_sqrt_d,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "weighted_sum_of_keys",
        att_mixes_keys,
        "mistake",
        "I returned weights @ k instead of weights @ v.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I took the softmax first and then multiplied the weights by the mask.",
    ),
    BlindCase(
        CHECK,
        "returns_scores",
        att_returns_scores,
        "mistake",
        "I returned the scaled scores as the second value instead of the weights.",
    ),
    BlindCase(
        CHECK,
        "dk_from_axis_2",
        att_dk_from_axis_2,
        "mistake",
        "I read d_k as q.size(2), right for (B, T, d_k) but the length for (B, H, T, d_k).",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_for_heads",
        att_mask_for_heads,
        "mistake",
        "I always added a head axis to the mask with mask.unsqueeze(1).",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        att_dropout_always,
        "mistake",
        "I added F.dropout(weights, p=0.1) as in the paper; F.dropout is on by default.",
    ),
    BlindCase(
        CHECK,
        "scales_q_in_place",
        att_scale_q_in_place,
        "mistake",
        "I scaled q in place with q /= sqrt(d_k), which changes the caller's q.",
    ),
    BlindCase(
        CHECK,
        "transposes_q",
        att_transpose_q,
        "mistake",
        "I wrote q^T k as q.transpose(-2, -1) @ k.",
    ),
    BlindCase(
        CHECK,
        "flattened_bmm",
        att_flat_bmm,
        "correct",
        "The leading axes flattened into one batch for torch.bmm, then reshaped back.",
    ),
    BlindCase(
        CHECK,
        "scale_on_keys",
        att_scaled_keys,
        "correct",
        "The keys scaled by d_k^-0.5 before the product; nan_to_num for a row with no key.",
    ),
    BlindCase(
        CHECK,
        "sdpa_for_out",
        att_sdpa_out,
        "correct",
        "out from F.scaled_dot_product_attention (with rows that see nothing set to 0) and the "
        "weights computed by hand with the same mask.",
    ),
]
