"""Blind set B12, check_self_attention (chapter 8): single-head self-attention."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_self_attention"


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
        w = masked_softmax(q @ k.transpose(1, 2), mask)
        return w @ v, w


class SADivideByDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(q @ k.transpose(1, 2) / q.shape[-1], mask)
        return w @ v, w


class SAOneMatrix(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # queries and keys are the same thing in self-attention
        v = x @ self.W_v
        w = masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SASoftmaxQueries(_Base):
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
        w = masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w.transpose(1, 2)  # (key, query) for the heat map


class SAOutputTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return v.transpose(1, 2) @ w.transpose(1, 2), w  # (B, d_v, T)


class SAMaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class SAMaskPolarity(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = padding
        w = torch.softmax(scores, dim=-1)
        return w @ v, w


class SAScaleByInput(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(q @ k.transpose(1, 2) / math.sqrt(x.shape[-1]), mask)
        return w @ v, w


class SAXTimesWTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        w = masked_softmax(k @ q.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)  # K Q^T
        return w @ v, w


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        w = masked_softmax(q @ k.mT / q.size(-1) ** 0.5, mask)
        return w @ v, w


class SAEinsum(_Base):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / math.sqrt(self.W_q.shape[1])
        w = masked_softmax(scores, mask)
        return torch.einsum("bij,bjv->biv", w, v), w


class SAHelpers(_Base):
    def scores(self, x: Tensor) -> Tensor:
        q, k, _ = self.qkv(x)
        return torch.matmul(q, k.transpose(-1, -2)) * self.W_k.shape[1] ** -0.5

    def forward(self, x, mask=None, return_scores: bool = False):
        s = self.scores(x)
        if mask is not None:
            m = mask.expand_as(s)
            s = s.masked_fill(~m, float("-inf"))
            empty = ~m.any(-1, keepdim=True)
            w = s.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
        else:
            w = s.softmax(-1)
        out = w @ (x @ self.W_v)
        return (out, w, s) if return_scores else (out, w)


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK,
        "divide_by_dk",
        SADivideByDk,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "one_matrix_qk",
        SAOneMatrix,
        "mistake",
        "I used W_q for both queries and keys since it is self-attention.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxQueries,
        "mistake",
        "I took the softmax over dim=1, the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, (key, query).",
    ),
    BlindCase(
        CHECK,
        "output_transposed",
        SAOutputTransposed,
        "mistake",
        "I computed V^T A^T and returned out as (B, d_v, T).",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "I accepted the mask argument but never used it.",
    ),
    BlindCase(
        CHECK, "mask_polarity", SAMaskPolarity, "mistake", "I filled -inf where the mask is True."
    ),
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByInput,
        "mistake",
        "I divided by sqrt of x's width d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        SAXTimesWTransposed,
        "mistake",
        "I computed K Q^T instead of Q K^T, so rows are keys.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear",
        SALinearLayers,
        "correct",
        "Three bias-free nn.Linear layers instead of Parameter matrices.",
    ),
    BlindCase(CHECK, "einsum", SAEinsum, "correct", "einsum for every product."),
    BlindCase(
        CHECK,
        "helper_method",
        SAHelpers,
        "correct",
        "A helper method for the scores, its own masked softmax, an extra return_scores "
        "argument with a default.",
    ),
]
