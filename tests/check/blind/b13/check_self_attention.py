"""Blind set B13, check_self_attention (chapter 8): single-head self-attention as readers write it."""

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
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1), mask)
        return weights @ v, weights


class SADivideByDk(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / k.shape[-1], mask)
        return weights @ v, weights


class SAScaleByDin(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAOneMatrix(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = x @ self.W_q
        k = x @ self.W_q  # copy-paste: the same matrix for queries and keys
        v = x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ v, weights


class SAWeightsTransposed(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # keys on the rows, to plot


class SAMixWithTranspose(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights.transpose(-2, -1) @ v, weights


class SAMaskIgnored(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SAMaskPolarity(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = _msoftmax(scores, None if mask is None else mask.logical_not())
        return weights @ v, weights


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)  # bias left on
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAMixesInputs(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, _ = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # a weighted average of the words themselves


class SAScaleByDv(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SABiasFreeLinear(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _msoftmax(q @ k.mT / q.shape[-1] ** 0.5, mask)
        return weights @ v, weights


class SAEinsum(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / math.sqrt(self.W_k.shape[1])
        weights = _msoftmax(scores, mask)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAScaledQueries(_Base):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0):
        super().__init__(d_in, d_k, d_v)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = (x @ self.W_q) * self.W_q.shape[-1] ** -0.5  # the scale folded into q
        scores = torch.matmul(q, (x @ self.W_k).transpose(1, 2))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = torch.isneginf(scores).all(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return self.dropout(weights) @ (x @ self.W_v), weights


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I did not scale the scores."),
    BlindCase(
        CHECK,
        "divide_by_dk",
        SADivideByDk,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_din",
        SAScaleByDin,
        "mistake",
        "I scaled by sqrt of the input width d_in.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_dv",
        SAScaleByDv,
        "mistake",
        "I scaled by sqrt(d_v), the width of the values.",
    ),
    BlindCase(
        CHECK,
        "one_matrix_qk",
        SAOneMatrix,
        "mistake",
        "I used W_q for both queries and keys (copy-paste).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, keys on the rows.",
    ),
    BlindCase(
        CHECK,
        "mixed_with_transpose",
        SAMixWithTranspose,
        "mistake",
        "I mixed the values with weights^T.",
    ),
    BlindCase(CHECK, "mask_ignored", SAMaskIgnored, "mistake", "I never used the mask."),
    BlindCase(
        CHECK, "mask_polarity", SAMaskPolarity, "mistake", "I hid the keys where the mask is True."
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        SALinearWithBias,
        "mistake",
        "I used nn.Linear layers and left their bias on.",
    ),
    BlindCase(
        CHECK,
        "mixes_inputs",
        SAMixesInputs,
        "mistake",
        "I multiplied the weights by x instead of V.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear",
        SABiasFreeLinear,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v (the chapter accepts them).",
    ),
    BlindCase(CHECK, "einsum", SAEinsum, "correct", "einsum for every product."),
    BlindCase(
        CHECK,
        "scaled_queries_dropout",
        SAScaledQueries,
        "correct",
        "The scale folded into q; an extra dropout argument defaulting to 0.",
    ),
]
