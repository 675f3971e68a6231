"""Blind set B25, check_attention (chapter 6): scaled dot-product attention as readers write it."""

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


def att_scale_after_softmax(q, k, v, mask=None):
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_times_sqrt(q, k, v, mask=None):
    weights = _masked_softmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_precedence(q, k, v, mask=None):
    d_k = q.shape[-1]
    weights = _masked_softmax(q @ k.transpose(-2, -1) / d_k**1 / 2, mask)  # d_k ** 1/2
    return weights @ v, weights


def att_d_from_dim_1(q, k, v, mask=None):
    d_k = q.size(1)  # q is (T, d_k)
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def att_mask_after_softmax(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def att_weights_times_keys(q, k, v, mask=None):
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights


def att_keys_times_queries(q, k, v, mask=None):
    scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # k q^T
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_minus_inf_no_guard(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    return weights @ v, weights


def att_returns_out_only(q, k, v, mask=None):
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v


def att_sdpa_inverted_mask(q, k, v, mask=None):
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    attn_mask = None if mask is None else ~mask  # PyTorch masks: True = blocked
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask), weights


def att_mask_unsqueezed(q, k, v, mask=None):
    if mask is not None:
        mask = mask.unsqueeze(1)  # (B, T_k) -> (B, 1, T_k), one row for all queries
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_mT_of_q(q, k, v, mask=None):
    scores = (q.mT @ k).mT  # the same as q @ k^T
    weights = _masked_softmax(scores / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_scale_by_keys_count(q, k, v, mask=None):
    scale = 1 / math.sqrt(k.shape[-2])  # one over sqrt of the number of keys
    weights = _masked_softmax(q @ k.transpose(-2, -1) * scale, mask)
    return weights @ v, weights


def att_masked_mean_of_values(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    out = (weights.unsqueeze(-1) * v.unsqueeze(-3)).mean(dim=-2)  # weighted average
    return out, weights


# ---------------------------------------------------------------- correct variants


def att_row_loop(q, k, v, mask=None):
    scale = q.shape[-1] ** -0.5
    outs, rows = [], []
    for i in range(q.shape[-2]):
        s = (q[..., i : i + 1, :] @ k.transpose(-2, -1)) * scale  # (..., 1, T_k)
        m = None
        if mask is not None:
            m = mask[..., i : i + 1, :] if mask.dim() >= 2 and mask.shape[-2] > 1 else mask
        w = _masked_softmax(s, m)
        rows.append(w)
        outs.append(w @ v)
    return torch.cat(outs, dim=-2), torch.cat(rows, dim=-2)


def att_sdpa_for_out(q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d_k)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), torch.softmax(scores, -1)
    has_key = mask.any(-1, keepdim=True)
    weights = torch.softmax(
        scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0), -1
    ).masked_fill(~has_key, 0.0)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    return out.masked_fill(~has_key, 0.0), weights


def att_float64_inside(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()
    scores = torch.einsum("...id,...jd->...ij", q64, k64) / math.sqrt(q.shape[-1])
    if mask is not None:
        low = torch.finfo(torch.float64).min
        scores = torch.where(mask, scores, torch.full_like(scores, low))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = torch.where(mask, weights, torch.zeros_like(weights))
    return torch.einsum("...ij,...jd->...id", weights, v64).to(dtype), weights.to(dtype)


def att_baddbmm(q, k, v, mask=None):
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    Tq, Tk, dk = q.shape[-2], k.shape[-2], q.shape[-1]
    q3 = q.expand(*lead, Tq, dk).reshape(-1, Tq, dk)
    k3 = k.expand(*lead, Tk, dk).reshape(-1, Tk, dk)
    v3 = v.expand(*lead, Tk, v.shape[-1]).reshape(-1, Tk, v.shape[-1])
    bias = q3.new_zeros(q3.shape[0], Tq, Tk)
    scores = torch.baddbmm(bias, q3, k3.transpose(1, 2), alpha=1 / math.sqrt(dk))
    scores = scores.view(*lead, Tq, Tk)
    weights = _masked_softmax(scores, mask)
    w3 = weights.reshape(-1, Tq, Tk)
    return torch.bmm(w3, v3).view(*weights.shape[:-1], v.shape[-1]), weights


CASES = [
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax, so the weights sum to 1/sqrt(d_k).",
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
        "power_precedence",
        att_precedence,
        "mistake",
        "I wrote d_k ** 1 / 2 for the square root, which Python reads as d_k / 2.",
    ),
    BlindCase(
        CHECK,
        "d_k_from_size_1",
        att_d_from_dim_1,
        "mistake",
        "I took d_k = q.size(1), right for a (T, d) query but the length T_q for a batch.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I took the softmax first and then zeroed the masked weights, so the rows do not sum to 1.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        att_weights_times_keys,
        "mistake",
        "I multiplied the weights by k instead of v at the end.",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        att_keys_times_queries,
        "mistake",
        "I wrote k @ q^T for the scores, so keys are on the rows.",
    ),
    BlindCase(
        CHECK,
        "minus_inf_no_guard",
        att_minus_inf_no_guard,
        "mistake",
        "I filled the masked scores with -inf and took the softmax; a query that sees no key "
        "gets NaN.",
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
        "sdpa_with_inverted_mask",
        att_sdpa_inverted_mask,
        "mistake",
        "I computed out with F.scaled_dot_product_attention and passed ~mask, thinking PyTorch's "
        "masks mean 'blocked'.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed",
        att_mask_unsqueezed,
        "mistake",
        "I always did mask.unsqueeze(1), expecting a (B, T_k) padding mask, so a full "
        "(B, T_q, T_k) mask no longer lines up.",
    ),
    BlindCase(
        CHECK,
        "mT_of_q_first",
        att_mT_of_q,
        "mistake",
        "I wrote (q^T k)^T for the scores, thinking it equals q k^T; it is a (d_k, d_k) matrix.",
    ),
    BlindCase(
        CHECK,
        "scale_by_number_of_keys",
        att_scale_by_keys_count,
        "mistake",
        "I scaled by 1/sqrt(T_k), the number of keys, instead of 1/sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "mean_instead_of_sum",
        att_masked_mean_of_values,
        "mistake",
        "I took the mean over the keys of weights * values instead of their sum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        att_row_loop,
        "correct",
        "A Python loop over the queries, one row of scores at a time, then concatenated.",
    ),
    BlindCase(
        CHECK,
        "sdpa_for_out",
        att_sdpa_for_out,
        "correct",
        "out from F.scaled_dot_product_attention (empty rows opened and zeroed afterwards), "
        "weights written out.",
    ),
    BlindCase(
        CHECK,
        "float64_einsum_finfo",
        att_float64_inside,
        "correct",
        "Computed in float64 with einsum and the dtype's lowest number as the fill, cast back "
        "to the input dtype.",
    ),
    BlindCase(
        CHECK,
        "baddbmm_bmm",
        att_baddbmm,
        "correct",
        "Flattened to 3-D batches, torch.baddbmm with alpha = 1/sqrt(d_k), torch.bmm for out.",
    ),
]
