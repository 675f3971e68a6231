"""Blind cases for check_attention (chapter 6)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_attention"


def at_scale_dv(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    w = masked_softmax(scores, mask)
    return w @ v, w


def at_scale_dk_not_sqrt(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    w = masked_softmax(scores, mask)
    return w @ v, w


def at_scale_Tk(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # the number of keys
    w = masked_softmax(scores, mask)
    return w @ v, w


def at_softmax_dim1(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=1)  # thought of (B, T_q, T_k): dim=1 is the queries
    return w @ v, w


def at_dot_T(q, k, v, mask=None):
    scores = q @ k.T / math.sqrt(q.shape[-1])  # .T reverses every axis of a batched k
    w = masked_softmax(scores, mask)
    return w @ v, w


def at_minus_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    w = torch.softmax(scores, dim=-1)
    return w @ v, w


def at_scale_after_softmax(q, k, v, mask=None):
    w = masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return w @ v, w


def at_mask_inverted(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    w = masked_softmax(scores, None if mask is None else ~mask)
    return w @ v, w


def at_returns_out_only(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return masked_softmax(scores, mask) @ v


def at_einsum(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    scores = torch.einsum("...qd,...kd->...qk", q * q.shape[-1] ** -0.5, k)
    w = masked_softmax(scores, mask)
    return torch.einsum("...qk,...kv->...qv", w, v), w


def at_own_softmax_scale_arg(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: float | None = None
) -> tuple[Tensor, Tensor]:
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = torch.matmul(q, k.mT) * scale
    if mask is not None:
        mask = mask.expand_as(scores)
        scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
        empty = ~mask.any(-1, keepdim=True)
        scores = scores.masked_fill(empty, 0.0)
        w = torch.softmax(scores, -1).masked_fill(empty, 0.0)
    else:
        w = torch.softmax(scores, -1)
    return torch.matmul(w, v), w


def at_bmm_reshape(q, k, v, mask=None):
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    qb = q.expand(*batch, *q.shape[-2:]).reshape(-1, *q.shape[-2:])
    kb = k.expand(*batch, *k.shape[-2:]).reshape(-1, *k.shape[-2:])
    vb = v.expand(*batch, *v.shape[-2:]).reshape(-1, *v.shape[-2:])
    scores = torch.bmm(qb, kb.transpose(1, 2)) / math.sqrt(q.shape[-1])
    scores = scores.reshape(*batch, q.shape[-2], k.shape[-2])
    w = masked_softmax(scores, mask)
    out = torch.bmm(w.reshape(-1, *w.shape[-2:]), vb).reshape(*batch, q.shape[-2], v.shape[-1])
    return out, w


CASES = [
    BlindCase(
        CHECK,
        "scale_by_sqrt_dv",
        at_scale_dv,
        "mistake",
        "divides the scores by sqrt(d_v) instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "scale_by_dk",
        at_scale_dk_not_sqrt,
        "mistake",
        "divides the scores by d_k instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "scale_by_number_of_keys",
        at_scale_Tk,
        "mistake",
        "divides the scores by sqrt(T_k), the number of keys, instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "softmax_dim1",
        at_softmax_dim1,
        "mistake",
        "takes the softmax over dim=1, which is the queries for (B, T_q, T_k) scores, with a -inf fill and no empty-row guard",
    ),
    BlindCase(
        CHECK,
        "k_dot_T_batched",
        at_dot_T,
        "mistake",
        "writes q @ k.T, which transposes every axis of a batched k instead of the last two",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9_plain_softmax",
        at_minus_1e9,
        "mistake",
        "masks with masked_fill(mask == 0, -1e9) and a plain softmax, so a query with no visible key averages all values",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        at_scale_after_softmax,
        "mistake",
        "divides the weights by sqrt(d_k) after the softmax instead of the scores before it",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        at_mask_inverted,
        "mistake",
        "passes ~mask to masked_softmax, thinking True means blocked",
    ),
    BlindCase(
        CHECK,
        "slip_returns_only_out",
        at_returns_out_only,
        "mistake",
        "returns only the output instead of the pair (out, weights)",
    ),
    BlindCase(
        CHECK,
        "einsum_prescaled_q",
        at_einsum,
        "correct",
        "scales q by d_k^-0.5 before an einsum and mixes the values with a second einsum",
    ),
    BlindCase(
        CHECK,
        "own_masking_with_scale_arg",
        at_own_softmax_scale_arg,
        "correct",
        "uses torch.matmul and .mT, masks with torch.where itself, and takes an optional scale argument",
    ),
    BlindCase(
        CHECK,
        "flatten_batch_bmm",
        at_bmm_reshape,
        "correct",
        "broadcasts the leading axes, flattens them into one batch and uses torch.bmm",
    ),
]
