"""Blind set B15, check_self_attention (chapter 8): single-head self-attention."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _msm(scores: Tensor, mask: Tensor | None) -> Tensor:
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
        w = _msm(q @ k.transpose(-2, -1), mask)
        return w @ v, w


class SADivideDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _msm(q @ k.transpose(-2, -1) / k.shape[-1], mask)
        return w @ v, w


class SAScaleDin(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return w @ v, w


class SASharedQK(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # the same projection for keys
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ (x @ self.W_v), w


class SAOverQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=1))
        return w @ v, w


class SAWeightsTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w.transpose(1, 2)  # column = query


class SAMixTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w.transpose(1, 2) @ v, w


class SAOutTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return v.transpose(1, 2) @ w.transpose(1, 2), w  # (B, d_v, T)


class SAIgnoresMask(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class SAPolarity(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        w = _msm(scores, None if mask is None else mask == 0)
        return w @ v, w


class SAValuesFromKeys(_Base):
    def forward(self, x, mask=None):
        q, k, _ = self._qkv(x)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ k, w


# ---------------------------------------------------------------- correct variants


class SALinear(nn.Module):
    """Bias-free nn.Linear layers named W_q, W_k, W_v."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        w = _msm(q @ k.mT / q.shape[-1] ** 0.5, mask)
        return w @ v, w


class SAEinsum(_Base):
    """einsum for the projections and both products."""

    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / math.sqrt(q.shape[-1])
        w = _msm(scores, mask)
        return torch.einsum("bij,bjv->biv", w, v), w


class SAScaledQuery(_Base):
    """Scale folded into q; an extra helper method and a dropout argument (default 0)."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0):
        super().__init__(d_in, d_k, d_v)
        self.drop = nn.Dropout(dropout)

    def scores(self, x: Tensor) -> Tensor:
        q = (x @ self.W_q) * self.W_q.shape[1] ** -0.5
        return torch.matmul(q, (x @ self.W_k).transpose(1, 2))

    def forward(self, x, mask=None):
        w = _msm(self.scores(x), mask)
        return self.drop(w) @ (x @ self.W_v), w


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to scale the scores."),
    BlindCase(CHECK, "divide_by_dk", SADivideDk, "mistake", "I divided by d_k, not sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleDin,
        "mistake",
        "I divided by sqrt of the input width d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "shared_qk_matrix",
        SASharedQK,
        "mistake",
        "I used W_q for both the queries and the keys.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SAOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed (column = query).",
    ),
    BlindCase(
        CHECK,
        "mix_with_transposed_weights",
        SAMixTransposed,
        "mistake",
        "I mixed the values with the transposed weights.",
    ),
    BlindCase(
        CHECK,
        "output_transposed",
        SAOutTransposed,
        "mistake",
        "I returned the output as (B, d_v, T).",
    ),
    BlindCase(CHECK, "mask_ignored", SAIgnoresMask, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "mask_polarity",
        SAPolarity,
        "mistake",
        "I masked where mask == 0 is True, i.e. the opposite polarity.",
    ),
    BlindCase(
        CHECK, "mixes_keys", SAValuesFromKeys, "mistake", "I mixed the keys instead of the values."
    ),
    BlindCase(
        CHECK,
        "bias_free_linear",
        SALinear,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v; k.mT.",
    ),
    BlindCase(
        CHECK, "einsum_where", SAEinsum, "correct", "einsum for the projections and both products."
    ),
    BlindCase(
        CHECK,
        "scaled_query_helper",
        SAScaledQuery,
        "correct",
        "Scale folded into q; a scores() helper and a dropout argument with default 0.",
    ),
]
