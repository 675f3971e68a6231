"""Blind set B21, check_self_attention (chapter 8): single-head self-attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (chapter 6's)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The three matrices under the book's names; subclasses write forward."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.d_k = d_k
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


# ---------------------------------------------------------------- mistakes


class SANoScale(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2), mask)
        return weights @ v, weights


class SADivideByDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / self.d_k, mask)
        return weights @ v, weights


class SAScaleByDin(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAOneMatrixForQK(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # queries and keys from the same projection
        v = x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=1).nan_to_num(0.0)
        return weights @ v, weights


class SAWeightsTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return weights @ v, weights.transpose(1, 2)  # (B, key, query) for the plot


class SAOutputTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return v.transpose(1, 2) @ weights.transpose(1, 2), weights  # (B, d_v, T)


class SAMaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), dim=-1)
        return weights @ v, weights


class SAMaskInverted(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        return scores.softmax(-1) @ v, scores.softmax(-1)


class SAValuesFromWk(_Base):
    def forward(self, x, mask=None):
        q, k, _ = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return weights @ k, weights  # k doubles as the values


class SAKeysTimesQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(k @ q.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return weights @ v, weights


class SAIgnoresDv(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.d_k = d_k
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))  # values as wide as keys

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAEinsum(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) * self.d_k**-0.5
        weights = _msoftmax(scores, mask)
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class SAScaleQueries(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.matmul(x, self.W_q) / math.sqrt(self.W_q.shape[1])
        k = torch.matmul(x, self.W_k)
        v = torch.matmul(x, self.W_v)
        scores = torch.matmul(q, k.mT)
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
            weights = scores.softmax(-1) * mask.any(-1, keepdim=True)
        else:
            weights = scores.softmax(-1)
        return torch.matmul(weights, v), weights


class SAChapterSix(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        from transformer_tutorial.attention import attention

        return attention(x @ self.W_q, x @ self.W_k, x @ self.W_v, mask=mask)


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to scale the scores."),
    BlindCase(CHECK, "divide_by_dk", SADivideByDk, "mistake", "I divided by d_k, not sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByDin,
        "mistake",
        "I scaled by sqrt(x.shape[-1]), the input size, instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "one_matrix_for_q_and_k",
        SAOneMatrixForQK,
        "mistake",
        "I computed the keys with W_q as well (copy-paste).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed (key, query), the way I wanted to plot them.",
    ),
    BlindCase(
        CHECK,
        "output_transposed",
        SAOutputTransposed,
        "mistake",
        "I computed the output as V^T A^T, which is (B, d_v, T).",
    ),
    BlindCase(CHECK, "mask_ignored", SAMaskIgnored, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        SAMaskInverted,
        "mistake",
        "I filled -inf where the mask is True.",
    ),
    BlindCase(
        CHECK,
        "values_are_keys",
        SAValuesFromWk,
        "mistake",
        "I multiplied the weights with the keys instead of the values.",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        SAKeysTimesQueries,
        "mistake",
        "I wrote the scores as K Q^T instead of Q K^T.",
    ),
    BlindCase(
        CHECK,
        "ignores_d_v",
        SAIgnoresDv,
        "mistake",
        "I made W_v (d_in, d_k) and ignored the d_v argument.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear",
        SALinearLayers,
        "correct",
        "Three bias-free nn.Linear layers named W_q, W_k, W_v.",
    ),
    BlindCase(CHECK, "einsum", SAEinsum, "correct", "Every product written with einsum."),
    BlindCase(
        CHECK,
        "scaled_queries_finfo",
        SAScaleQueries,
        "correct",
        "Queries scaled before the product; masked scores set to the dtype's lowest value.",
    ),
    BlindCase(
        CHECK,
        "chapter_six_attention",
        SAChapterSix,
        "correct",
        "The projections, then chapter 6's attention function.",
    ),
]
