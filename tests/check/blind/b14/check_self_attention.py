"""Blind set B14, check_self_attention (chapter 8): a single-head self-attention layer."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
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

    def qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


# ---------------------------------------------------------------- mistakes


class SANoScale(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _msoftmax(q @ k.transpose(-2, -1), mask)
        return w @ v, w


class SAScaleByDin(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)  # the input width
        return w @ v, w


class SAScaleByT(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[1]), mask)
        return w @ v, w


class SASharedQK(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # queries and keys are the same tokens
        v = x @ self.W_v
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SASoftmaxDim1(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=1)
        return w @ v, w


class SAWeightsTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _msoftmax(k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)  # keys x queries
        return w @ v, w


class SAOutTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return v.transpose(-2, -1) @ w.transpose(-2, -1), w  # (B, d_v, T)


class SAIgnoresMask(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class SAMaskPolarity(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # hide where the mask says so
        w = torch.softmax(scores, dim=-1)
        return w @ v, w


class SAMaskAfter(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            w = w * mask
        return w @ v, w


class SADivideByDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _msoftmax(q @ k.transpose(-2, -1) / q.shape[-1], mask)  # divide by d_k
        return w @ v, w


# ---------------------------------------------------------------- correct variants


class SALinear(nn.Module):
    """Bias-free nn.Linear layers instead of raw matrices (accepted by the check)."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        w = _msoftmax(q @ k.mT / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SAEinsum(_Base):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) * q.shape[-1] ** -0.5
        w = _msoftmax(scores, mask)
        return torch.einsum("bqs,bsv->bqv", w, v), w


class SAXavier(nn.Module):
    """Xavier-initialised parameters, a helper for the scores, an unused dropout argument."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_k)))
        self.W_k = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_k)))
        self.W_v = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_v or d_k)))
        self.drop = nn.Dropout(dropout)

    def scores(self, x: Tensor) -> Tensor:
        q = torch.matmul(x, self.W_q) / math.sqrt(self.W_q.shape[1])
        return torch.matmul(q, torch.matmul(x, self.W_k).transpose(1, 2))

    def forward(self, x, mask=None):
        w = _msoftmax(self.scores(x), mask)
        return self.drop(w) @ (x @ self.W_v), w


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByDin,
        "mistake",
        "I divided by sqrt of the input width d_in instead of d_k.",
    ),
    BlindCase(
        CHECK, "scale_by_T", SAScaleByT, "mistake", "I divided by sqrt(T), the sequence length."
    ),
    BlindCase(CHECK, "shared_qk", SASharedQK, "mistake", "I used W_q for both queries and keys."),
    BlindCase(
        CHECK,
        "softmax_dim1",
        SASoftmaxDim1,
        "mistake",
        "I took the softmax over dim=1, the queries.",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        SAWeightsTransposed,
        "mistake",
        "I computed K Q^T instead of Q K^T, so the weights are transposed.",
    ),
    BlindCase(
        CHECK,
        "out_transposed",
        SAOutTransposed,
        "mistake",
        "I returned V^T W^T, the output (B, d_v, T) instead of (B, T, d_v).",
    ),
    BlindCase(CHECK, "ignores_mask", SAIgnoresMask, "mistake", "I never used the mask."),
    BlindCase(
        CHECK, "mask_polarity", SAMaskPolarity, "mistake", "I filled -inf where the mask is True."
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        SAMaskAfter,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "divide_by_dk",
        SADivideByDk,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "linear_layers",
        SALinear,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v, and k.mT.",
    ),
    BlindCase(CHECK, "einsum", SAEinsum, "correct", "einsum for the projections and products."),
    BlindCase(
        CHECK,
        "xavier_helper",
        SAXavier,
        "correct",
        "Xavier init, a scores helper with the scale on q, an extra dropout defaulting to 0.",
    ),
]
