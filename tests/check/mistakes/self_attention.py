"""Mistakes in the single-head self-attention layer with W_q, W_k, W_v (chapter 8)."""

from __future__ import annotations

import math

import torch
from torch import nn

from transformer_tutorial import check

from . import Correct, Mistake


class SelfAttentionRight(nn.Module):
    """The book's layer, with a switch for each mistake (subclasses flip one)."""

    scale_power = 0.5  # divide by d_k ** scale_power
    softmax_axis = -1
    key_matrix = "W_k"
    transpose_weights = False
    mask_hides_true = False

    def __init__(self, d_in, d_k, d_v=None):
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ getattr(self, self.key_matrix), x @ self.W_v
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** self.scale_power  # (B, T, T)
        if mask is not None:
            hidden = mask if self.mask_hides_true else ~mask
            scores = scores.masked_fill(hidden, float("-inf"))
        weights = scores.softmax(dim=self.softmax_axis)
        if self.transpose_weights:
            weights = weights.transpose(-2, -1)
        return weights @ v, weights


class Unscaled(SelfAttentionRight):
    scale_power = 0.0


class ScaledByDk(SelfAttentionRight):
    scale_power = 1.0


class OneMatrixForQueriesAndKeys(SelfAttentionRight):
    key_matrix = "W_q"


class ScaledBySqrtDv(SelfAttentionRight):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)
        return weights @ v, weights


class ScaledBySqrtDin(SelfAttentionRight):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # the input's width
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)
        return weights @ v, weights


class KeysTimesQueries(SelfAttentionRight):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # one row per key
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)
        return weights @ v, weights


class SoftmaxOverQueries(SelfAttentionRight):
    softmax_axis = -2


class TransposedWeights(SelfAttentionRight):
    transpose_weights = True


class MaskPolarity(SelfAttentionRight):
    mask_hides_true = True


class MaskIgnored(SelfAttentionRight):
    def forward(self, x, mask=None):
        return super().forward(x)


class TransposedOutput(SelfAttentionRight):
    def forward(self, x, mask=None):
        out, weights = super().forward(x, mask)
        return out.transpose(-2, -1), weights  # (B, d_v, T)


class WithLinearLayers(nn.Module):
    """Right, with bias-free linear layers and the fused kernel; weights computed alongside."""

    def __init__(self, d_in, d_k, d_v=None):
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return out, scores.softmax(-1)


SA = check.check_self_attention

MISTAKES = [
    Mistake(SA, "self-attn-unscaled", Unscaled, "the scores are not scaled"),
    Mistake(SA, "self-attn-scaled-by-dk", ScaledByDk, "divide once by its square root"),
    Mistake(SA, "self-attn-one-matrix", OneMatrixForQueriesAndKeys, "the keys are made with W_q"),
    Mistake(
        SA, "self-attn-softmax-queries", SoftmaxOverQueries, "the softmax runs over the queries"
    ),
    Mistake(SA, "self-attn-transposed-weights", TransposedWeights, "the weights are transposed"),
    Mistake(SA, "self-attn-transposed-out", TransposedOutput, "it is transposed"),
    Mistake(SA, "self-attn-mask-polarity", MaskPolarity, "mask polarity"),
    Mistake(SA, "self-attn-mask-ignored", MaskIgnored, "the mask is ignored"),
    Mistake(SA, "self-attn-sqrt-dv", ScaledBySqrtDv, "divided by sqrt(d_v)"),
    Mistake(SA, "scale-other", ScaledBySqrtDin, "d_in, the input's width"),
    Mistake(SA, "self-attn-k-times-q", KeysTimesQueries, "the scores are K Q^T"),
]

CORRECT = [
    Correct(SA, "self-attn-matrices", SelfAttentionRight),
    Correct(SA, "self-attn-linear-fused", WithLinearLayers),
]
