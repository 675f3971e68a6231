"""Blind set B22, check_self_attention (chapter 8): single-head self-attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import attention

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def _qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


# ---------------------------------------------------------------- mistakes


class SANoScale(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _masked_softmax(q @ k.transpose(1, 2), mask)
        return w @ v, w


class SADivideByDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _masked_softmax(q @ k.transpose(1, 2) / q.shape[-1], mask)
        return w @ v, w


class SAScaleByDv(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(v.shape[-1]), mask)
        return w @ v, w


class SASharedQK(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_q, x @ self.W_v  # copy-paste: W_q twice
        w = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SAValuesFromWk(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_k
        w = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SASoftmaxOverQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=1)
        return w @ v, w


class SAKeysAsRows(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = k @ q.transpose(1, 2) / math.sqrt(q.shape[-1])  # K Q^T
        w = _masked_softmax(scores, mask)
        return w @ v, w


class SAWeightsTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w.transpose(1, 2)  # (key, query) for the heat map


class SAOutputTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return v.transpose(1, 2) @ w.transpose(1, 2), w  # (B, d_v, T)


class SAMaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class SAMaskInverted(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        w = _masked_softmax(scores, None if mask is None else mask == 0)
        return w @ v, w


class SAMaskMultipliesWeights(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            w = w * mask
        return w @ v, w


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        w = _masked_softmax(q @ k.mT / math.sqrt(k.shape[-1]), mask)
        return w @ v, w


class SAEinsum(_Base):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / q.shape[-1] ** 0.5
        if mask is not None:
            mask = mask.expand_as(scores)
            scores = scores.masked_fill(~mask, -torch.inf)
            empty = ~mask.any(-1, keepdim=True)
            w = scores.masked_fill(empty, 0).softmax(-1).masked_fill(empty, 0)
        else:
            w = scores.softmax(-1)
        return torch.einsum("bij,bjv->biv", w, v), w


class SAChapterAttention(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, d_v or d_k))
        for W in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(W)

    def forward(self, x, mask=None):
        return attention(x @ self.W_q, x @ self.W_k, x @ self.W_v, mask)


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(CHECK, "divide_by_dk", SADivideByDk, "mistake", "I divided by d_k, not sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_by_d_v",
        SAScaleByDv,
        "mistake",
        "I scaled by sqrt(d_v), the width of the values.",
    ),
    BlindCase(
        CHECK,
        "shared_q_k",
        SASharedQK,
        "mistake",
        "I used W_q for both the queries and the keys (copy-paste).",
    ),
    BlindCase(
        CHECK,
        "values_from_W_k",
        SAValuesFromWk,
        "mistake",
        "I computed the values with W_k instead of W_v.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim 1 (the queries).",
    ),
    BlindCase(CHECK, "keys_as_rows", SAKeysAsRows, "mistake", "I computed K Q^T instead of Q K^T."),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, one row per key.",
    ),
    BlindCase(
        CHECK,
        "output_transposed",
        SAOutputTransposed,
        "mistake",
        "I computed V^T W^T, so the output is (B, d_v, T).",
    ),
    BlindCase(CHECK, "mask_ignored", SAMaskIgnored, "mistake", "I never applied the mask."),
    BlindCase(
        CHECK, "mask_inverted", SAMaskInverted, "mistake", "I masked where the mask is True."
    ),
    BlindCase(
        CHECK,
        "mask_multiplies_weights",
        SAMaskMultipliesWeights,
        "mistake",
        "I multiplied the softmax weights by the mask, without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "linear_layers",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v.",
    ),
    BlindCase(
        CHECK, "einsum", SAEinsum, "correct", "einsum throughout, mask with -inf and a guard."
    ),
    BlindCase(
        CHECK,
        "chapter_attention",
        SAChapterAttention,
        "correct",
        "Xavier-initialized matrices and chapter 6's attention function.",
    ),
]
