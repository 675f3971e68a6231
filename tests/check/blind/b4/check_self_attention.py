"""Blind cases for check_self_attention (chapter 8), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import BlindCase

CHECK = "check_self_attention"


def _softmax(scores, mask, dim=-1):
    if mask is None:
        return torch.softmax(scores, dim=dim)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=dim)
    return weights.masked_fill(~has_key, 0.0)


class _Params(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.d_in, self.d_k = d_in, d_k
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def qkv(self, x):
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


class ScaleByInputWidth(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_in), mask)
        return weights @ v, weights


class LinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.d_k = d_k
        self.W_q = nn.Linear(d_in, d_k)
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_v)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return weights @ v, weights


class KeysTimesQueries(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _softmax(k @ q.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return weights @ v, weights


class MaskTrueHides(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        weights = _softmax(scores, None if mask is None else ~mask)
        return weights @ v, weights


class MaskMultipliesScores(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores * mask
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SoftmaxDimOne(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask, dim=1)
        return weights @ v, weights


class WeightsBeforeMask(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        raw = torch.softmax(scores, dim=-1)  # kept for plotting
        weights = _softmax(scores, mask)
        return weights @ v, raw


class BiasFreeLinears(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.mT * k.shape[-1] ** -0.5
        weights = _softmax(scores, mask)
        return weights @ v, weights


class EinsumParams(_Params):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0):
        super().__init__(d_in, d_k, d_v)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,btk->bqt", q, k) / math.sqrt(q.shape[-1])
        weights = _softmax(scores, mask)
        return torch.einsum("bqt,btv->bqv", self.dropout(weights), v), weights


CASES = [
    BlindCase(
        CHECK,
        "scale_by_input_width",
        ScaleByInputWidth,
        "mistake",
        "I divided the scores by sqrt(d_in), the width of x, instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        LinearWithBias,
        "mistake",
        "I used nn.Linear layers for W_q, W_k, W_v and kept their default bias",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        KeysTimesQueries,
        "mistake",
        "I wrote K Q^T instead of Q K^T",
    ),
    BlindCase(
        CHECK,
        "mask_true_hides",
        MaskTrueHides,
        "mistake",
        "I negated the mask before using it, thinking True marks what to hide",
    ),
    BlindCase(
        CHECK,
        "mask_multiplies_scores",
        MaskMultipliesScores,
        "mistake",
        "I multiplied the scores by the mask, so hidden keys get score 0, not -inf",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_one",
        SoftmaxDimOne,
        "mistake",
        "I took the softmax over dim=1 of the (B, T, T) scores, thinking it was the keys",
    ),
    BlindCase(
        CHECK,
        "weights_before_mask",
        WeightsBeforeMask,
        "mistake",
        "I returned the unmasked softmax as the weights (the output uses the masked one)",
    ),
    BlindCase(
        CHECK,
        "bias_free_linears",
        BiasFreeLinears,
        "correct",
        "bias-free nn.Linear layers, k.mT and a multiplication by d_k ** -0.5",
    ),
    BlindCase(
        CHECK,
        "einsum_params",
        EinsumParams,
        "correct",
        "every product by einsum; an optional dropout argument, 0 by default",
    ),
]
