"""Blind set B34, check_self_attention (chapter 8): a single-head self-attention layer by readers."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1)


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
        w = _softmax(q @ k.transpose(-2, -1), mask)
        return w @ v, w


class SAScaleDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _softmax(q @ k.transpose(-2, -1) / k.shape[-1], mask)
        return w @ v, w


class SAScaleDin(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _softmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)  # d_in
        return w @ v, w


class SAShareQK(_Base):
    def forward(self, x, mask=None):
        q, _, v = self.qkv(x)
        k = x @ self.W_q  # the same projection for queries and keys
        w = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SASoftmaxQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = scores.softmax(dim=1)
        return w @ v, w


class SAWeightsTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # keys against queries
        w = _softmax(scores, mask)
        return w @ v, w


class SAMaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class SAMaskPolarity(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        return scores.softmax(-1) @ v, scores.softmax(-1)


class SAOutputTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return (w @ v).transpose(-2, -1), w  # (B, d_v, T)


class SAResidual(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return v + w @ v, w  # keep the token's own value too


class SAProjectTransposed(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_k
        v = x @ self.W_v.T  # as with nn.Linear's weight
        w = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SAMaskMultiplied(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores * mask  # zero the hidden scores
        w = scores.softmax(-1)
        return w @ v, w


# ---------------------------------------------------------------- correct variants


class SALinear(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)
        self.scale = d_k**-0.5

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.einsum("bqd,bkd->bqk", q, k) * self.scale
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), -1e9)  # every query sees a key
        w = scores.softmax(dim=-1)
        return torch.einsum("bqk,bkd->bqd", w, v), w


class SAFusedQKV(_Base):
    def forward(self, x, mask=None):
        d_k = self.W_q.shape[1]
        qkv = x @ torch.cat([self.W_q, self.W_k, self.W_v], dim=1)  # one matmul
        q, k, v = qkv[..., :d_k], qkv[..., d_k : 2 * d_k], qkv[..., 2 * d_k :]
        scores = (q / math.sqrt(d_k)) @ k.mT
        if mask is not None:
            scores = torch.where(mask, scores, float("-inf"))
        w = torch.softmax(scores, -1)
        return w @ v, w


class SAZeroInit(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, d_v))
        for p in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(p)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.matmul(x, self.W_q)
        k = torch.matmul(x, self.W_k)
        v = torch.matmul(x, self.W_v)
        scores = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(k.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), float("-inf"))
        w = nn.functional.softmax(scores, dim=2)
        return torch.matmul(w, v), w


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to scale the scores"),
    BlindCase(CHECK, "divide_by_dk", SAScaleDk, "mistake", "I divided by d_k without the root"),
    BlindCase(
        CHECK, "sqrt_d_in", SAScaleDin, "mistake", "I scaled by sqrt of the input width x.shape[-1]"
    ),
    BlindCase(
        CHECK, "one_matrix_qk", SAShareQK, "mistake", "I used W_q for the keys too (copy-paste)"
    ),
    BlindCase(CHECK, "softmax_dim1", SASoftmaxQueries, "mistake", "I took the softmax over dim=1"),
    BlindCase(
        CHECK,
        "keys_times_queries",
        SAWeightsTransposed,
        "mistake",
        "I wrote k @ q^T for the scores",
    ),
    BlindCase(CHECK, "mask_unused", SAMaskIgnored, "mistake", "I never applied the mask"),
    BlindCase(
        CHECK, "mask_true_blocks", SAMaskPolarity, "mistake", "I filled -inf where the mask is True"
    ),
    BlindCase(
        CHECK,
        "output_transposed",
        SAOutputTransposed,
        "mistake",
        "I returned the output as (B, d_v, T)",
    ),
    BlindCase(
        CHECK,
        "residual_value",
        SAResidual,
        "mistake",
        "I added each token's own value to the mixed values",
    ),
    BlindCase(
        CHECK,
        "W_v_transposed",
        SAProjectTransposed,
        "mistake",
        "I wrote x @ W_v.T for the values, as I do with nn.Linear weights",
    ),
    BlindCase(
        CHECK,
        "mask_multiplied",
        SAMaskMultiplied,
        "mistake",
        "I multiplied the scores by the mask to hide keys",
    ),
    BlindCase(
        CHECK,
        "linear_layers_einsum",
        SALinear,
        "correct",
        "I used bias-free nn.Linear layers, einsum, and a -1e9 fill",
    ),
    BlindCase(
        CHECK,
        "fused_qkv_matmul",
        SAFusedQKV,
        "correct",
        "I concatenated the three matrices for one matmul and split the result",
    ),
    BlindCase(
        CHECK,
        "xavier_init_matmul",
        SAZeroInit,
        "correct",
        "I initialised the matrices with xavier_uniform_ and used torch.matmul",
    ),
]
