"""Blind set B11, check_self_attention (chapter 8): one self-attention head as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


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
        weights = _msoftmax(q @ k.transpose(1, 2), mask)
        return weights @ v, weights


class SADivideByDk(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / k.shape[-1], mask)
        return weights @ v, weights


class SAScaleByDv(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAScaleByDin(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SASharedQK(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = x @ self.W_q
        k = x @ self.W_q  # queries and keys both come from x
        v = x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ v, weights


class SAWeightsTransposed(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # (key, query), as in the heat maps


class SAOutputFromTransposedWeights(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights.transpose(1, 2) @ v, weights


class SAMaskIgnored(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SAMaskPolarity(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # hide where True
        weights = torch.nan_to_num(scores.softmax(-1))
        return weights @ v, weights


class SAValuesSizeDk(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k))  # all three the same shape

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    """Bias-free nn.Linear layers instead of parameter matrices (accepted by the check)."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _msoftmax(q @ k.mT / math.sqrt(k.size(-1)), mask)
        return weights @ v, weights


class SAEinsum(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) * q.shape[-1] ** -0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)  # every query keeps a key in the chapter's masks
        if mask is not None:
            weights = torch.nan_to_num(weights)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAFusedWithHelpers(nn.Module):
    """One (d_in, 2 d_k + d_v) matmul split in three; a dropout and a weights helper."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0):
        super().__init__()
        self.d_k, self.d_v = d_k, d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, self.d_v))
        for w in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(w)
        self.dropout = nn.Dropout(dropout)

    def attention_weights(self, q: Tensor, k: Tensor, mask: Tensor | None) -> Tensor:
        return _msoftmax(torch.bmm(q / math.sqrt(self.d_k), k.transpose(1, 2)), mask)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        W = torch.cat([self.W_q, self.W_k, self.W_v], dim=1)
        q, k, v = (x @ W).split([self.d_k, self.d_k, self.d_v], dim=-1)
        weights = self.attention_weights(q, k, mask)
        return torch.bmm(self.dropout(weights), v), weights


class SAMixThenProject(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        weights = _msoftmax(
            torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.W_k.shape[1]), mask
        )
        return (weights @ x) @ self.W_v, weights  # mix the inputs, then project: the same


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK,
        "divide_by_dk",
        SADivideByDk,
        "mistake",
        "I divided the scores by d_k, not sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_dv",
        SAScaleByDv,
        "mistake",
        "I scaled by the square root of the values' size d_v.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_d_in",
        SAScaleByDin,
        "mistake",
        "I scaled by the square root of the input size d_in, the size of x.",
    ),
    BlindCase(
        CHECK,
        "W_q_for_keys_too",
        SASharedQK,
        "mistake",
        "I computed the keys with W_q as well (copy-paste), so W_k is never used.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, which for (B, T, T) is the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, keys on the rows, to match the heat maps.",
    ),
    BlindCase(
        CHECK,
        "output_from_transposed_weights",
        SAOutputFromTransposedWeights,
        "mistake",
        "I multiplied weights.transpose(1, 2) @ v, mixing with the columns instead of the rows.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "I accepted mask but never used it.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        SAMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True, as with PyTorch's attn_mask of nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "W_v_of_size_d_k",
        SAValuesSizeDk,
        "mistake",
        "I gave W_v the shape (d_in, d_k) like the others, ignoring d_v.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_layers",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v instead of parameter matrices.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        SAEinsum,
        "correct",
        "einsum for the projections and both products; the scale as ** -0.5.",
    ),
    BlindCase(
        CHECK,
        "one_matmul_split_with_helpers",
        SAFusedWithHelpers,
        "correct",
        "One matmul with the three matrices concatenated, then split; xavier init, a dropout "
        "(default 0) and an attention_weights helper.",
    ),
    BlindCase(
        CHECK,
        "mix_inputs_then_project",
        SAMixThenProject,
        "correct",
        "The output as (weights @ x) @ W_v, which equals weights @ (x @ W_v).",
    ),
]
