"""Blind set B10, check_self_attention (chapter 8): single-head self-attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """Three parameter matrices ``(d_in, d_k)``, ``(d_in, d_k)``, ``(d_in, d_v)``."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SANoScale(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1), mask)  # the notes' q . k
        return weights @ v, weights


class SAScaleByDv(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAScaleByDin(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # the input's width
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAQueryMatrixForKeys(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = x @ self.W_q
        k = x @ self.W_q  # Q = K = V before projection, so one matrix for both
        v = x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxColumns(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)  # (B, T, T): normalise each column
        return weights @ v, weights


class SAWeightsTransposed(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        A = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return A @ v, A.transpose(-2, -1)  # one column per query, as b^1 = [v^1 .. v^4] a'


class SAOutputAsColumns(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        A = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        out = v.transpose(-2, -1) @ A.transpose(-2, -1)  # [v^1 ... v^T] times the weights
        return out, A  # (B, d_v, T)


class SAMaskIgnored(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SAMaskPolarity(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # hide where the mask is set
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return weights @ v, weights


class SADvDefaultsToDin(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_in if d_v is None else d_v  # values keep the input's width
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)  # nn.Linear's default bias
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAReturnsOutputOnly(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v


# ---------------------------------------------------------------- correct variants


class SALinearNoBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.d_k = d_k
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / self.d_k**0.5
        weights = _masked_softmax(scores, mask)
        return torch.bmm(weights, v), weights


class SAEinsum(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) * q.shape[-1] ** -0.5
        if mask is not None:
            scores.masked_fill_(~mask, float("-inf"))  # in place, on my own scores
            empty = ~mask.any(-1, keepdim=True)
            scores.masked_fill_(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class SAOneFusedMatrix(nn.Module):
    """W_q, W_k, W_v as the parameters, concatenated for one product; extra dropout argument."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0) -> None:
        super().__init__()
        self.d_k, self.d_v = d_k, d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, self.d_v))
        self.dropout = dropout
        for W in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(W)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        qkv = x @ torch.cat([self.W_q, self.W_k, self.W_v], dim=1)
        q, k, v = qkv.split([self.d_k, self.d_k, self.d_v], dim=-1)
        weights = _masked_softmax(q @ k.mT / math.sqrt(self.d_k), mask)
        dropped = F.dropout(weights, self.dropout, self.training) if self.dropout else weights
        return dropped @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "no_scale",
        SANoScale,
        "mistake",
        "I used the plain dot product q . k as the notes write it, without 1/sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "scale_sqrt_dv",
        SAScaleByDv,
        "mistake",
        "I divided by sqrt of the values' size d_v.",
    ),
    BlindCase(
        CHECK,
        "scale_sqrt_din",
        SAScaleByDin,
        "mistake",
        "I divided by sqrt(d_in), the width of the input, instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "W_q_for_keys",
        SAQueryMatrixForKeys,
        "mistake",
        "I projected the keys with W_q too, since queries and keys come from the same input.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        SASoftmaxColumns,
        "mistake",
        "I took the softmax over dim=1 of the (B, T, T) scores, which is the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, one column per query, as the notes draw them.",
    ),
    BlindCase(
        CHECK,
        "output_as_columns",
        SAOutputAsColumns,
        "mistake",
        "I computed the output as V^T A^T, the notes' column form, so it is (B, d_v, T).",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "I accepted the mask argument but never used it.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        SAMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True, the opposite polarity.",
    ),
    BlindCase(
        CHECK,
        "d_v_defaults_to_d_in",
        SADvDefaultsToDin,
        "mistake",
        "When d_v is None I made W_v (d_in, d_in) instead of (d_in, d_k).",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        SALinearWithBias,
        "mistake",
        "I used nn.Linear layers but left their bias on, so q, k and v get an offset.",
    ),
    BlindCase(
        CHECK,
        "returns_output_only",
        SAReturnsOutputOnly,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "linear_no_bias_bmm",
        SALinearNoBias,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v, and torch.bmm for the products.",
    ),
    BlindCase(
        CHECK,
        "einsum_inplace_mask",
        SAEinsum,
        "correct",
        "einsum everywhere; the mask written into my own scores with masked_fill_.",
    ),
    BlindCase(
        CHECK,
        "fused_qkv_product",
        SAOneFusedMatrix,
        "correct",
        "The three parameter matrices concatenated for one product and split after; xavier "
        "init; an extra dropout argument (0 by default).",
    ),
]
