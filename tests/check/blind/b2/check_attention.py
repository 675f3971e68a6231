"""Blind cases for check_attention (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_attention"


# ---- mistakes -------------------------------------------------------------------------------


def no_scale(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1), mask)
    return weights @ v, weights


def scale_by_dv(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
    return weights @ v, weights


def scale_by_dk_not_sqrt(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / q.shape[-1], mask)
    return weights @ v, weights


def softmax_over_queries(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2).nan_to_num(0.0)
    return weights @ v, weights


def mask_inverted(q, k, v, mask=None):
    weights = masked_softmax(
        q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), None if mask is None else ~mask
    )
    return weights @ v, weights


def fill_minus_1e9(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def k_dot_T(q, k, v, mask=None):
    weights = masked_softmax(q @ k.T / math.sqrt(q.shape[-1]), mask)  # .T as in the 2-D formula
    return weights @ v, weights


def mask_after_softmax(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights


def values_weighted_by_keys(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights  # multiplied by k instead of v


# ---- reader's slip ------------------------------------------------------------------------------


def weights_then_out(q, k, v, mask=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights, weights @ v


# ---- correct variants ---------------------------------------------------------------------------


def einsum_version(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.size(-1) ** 0.5
    weights = masked_softmax(scores, mask)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


def scale_queries_first(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0
):
    q = q * q.shape[-1] ** -0.5
    scores = torch.matmul(q, k.mT)
    if mask is not None:
        empty = ~mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
        weights = torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)
    else:
        weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


def baddbmm_flattened(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    *batch, T_q, d = q.shape
    T_k, d_v = k.shape[-2], v.shape[-1]
    qf, kf, vf = q.reshape(-1, T_q, d), k.reshape(-1, T_k, d), v.reshape(-1, T_k, d_v)
    scores = torch.bmm(qf, kf.transpose(1, 2)).mul(1.0 / math.sqrt(d)).reshape(*batch, T_q, T_k)
    weights = masked_softmax(scores, mask)
    out = torch.bmm(weights.reshape(-1, T_q, T_k), vf).reshape(*batch, T_q, d_v)
    return out, weights


CASES = [
    BlindCase(CHECK, "no_scale", no_scale, "mistake", "I forgot to divide the scores by sqrt(d_k)"),
    BlindCase(
        CHECK,
        "scale_by_dv",
        scale_by_dv,
        "mistake",
        "I divided by sqrt of the values' size d_v instead of d_k",
    ),
    BlindCase(
        CHECK,
        "scale_by_dk_not_sqrt",
        scale_by_dk_not_sqrt,
        "mistake",
        "I divided the scores by d_k instead of its square root",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        softmax_over_queries,
        "mistake",
        "I took the softmax over dim -2, the queries",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        mask_inverted,
        "mistake",
        "I passed ~mask to the masked softmax, treating True as blocked",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        fill_minus_1e9,
        "mistake",
        "I wrote masked_fill(mask == 0, -1e9) like the Annotated Transformer, so a query with no key attends to all keys",
    ),
    BlindCase(
        CHECK,
        "k_dot_T",
        k_dot_T,
        "mistake",
        "I wrote q @ k.T as in the formula, which reverses every axis of a batched k",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        mask_after_softmax,
        "mistake",
        "I took the softmax first and multiplied the weights by the mask afterwards",
    ),
    BlindCase(
        CHECK,
        "values_weighted_by_keys",
        values_weighted_by_keys,
        "mistake",
        "I multiplied the weights by k instead of v",
    ),
    BlindCase(
        CHECK,
        "weights_then_out",
        weights_then_out,
        "mistake",
        "I returned (weights, out) instead of (out, weights)",
    ),
    BlindCase(
        CHECK,
        "einsum_version",
        einsum_version,
        "correct",
        "I wrote both products with einsum over any leading axes",
    ),
    BlindCase(
        CHECK,
        "scale_queries_first",
        scale_queries_first,
        "correct",
        "I scaled q before the product, used k.mT and my own guarded masked softmax, with an extra dropout_p argument",
    ),
    BlindCase(
        CHECK,
        "baddbmm_flattened",
        baddbmm_flattened,
        "correct",
        "I flattened the leading axes into one batch and used torch.bmm",
    ),
]
