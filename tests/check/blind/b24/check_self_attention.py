"""Blind set B24, check_self_attention (chapter 8): single-head self-attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _SA(nn.Module):
    """The book's three matrices; each case below changes only ``forward``."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


# ---------------------------------------------------------------- mistakes


class SANoScale(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1), mask)
        return weights @ v, weights


class SADivideByDk(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / k.shape[-1], mask)
        return weights @ v, weights


class SAScaleByDv(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAScaleByDin(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAOneMatrixForQK(_SA):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # the same projection for queries and keys
        v = x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAValuesFromWk(_SA):
    def forward(self, x, mask=None):
        q, k = x @ self.W_q, x @ self.W_k
        v = x @ self.W_k  # copy-paste of the line above
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)  # (B, T, T): dim 1 after the batch
        return weights @ v, weights


class SAKeysTimesQueries(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # K Q^T
        weights = _msoftmax(scores, mask)
        return weights @ v, weights


class SAWeightsReturnedTransposed(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(-2, -1)  # row = key, as in my plots


class SAOutputFromTransposed(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights.transpose(-2, -1) @ v, weights


class SAMaskIgnored(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SAMaskTrueBlocks(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = blocked
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SAMaskedScoresZero(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores * mask  # masked scores become 0
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)  # bias left at its default
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearNoBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            scores = scores.masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.bmm(weights, v), weights


class SAEinsum(_SA):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) * q.shape[-1] ** -0.5
        if mask is not None:
            scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)
            weights = scores.softmax(-1) * mask.any(-1, keepdim=True)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class SAQueryLoop(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / d_in**0.5)
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / d_in**0.5)
        self.W_v = nn.Parameter(torch.randn(d_in, d_v or d_k) / d_in**0.5)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        B, T, _ = x.shape
        full = torch.ones(B, T, T, dtype=torch.bool) if mask is None else mask.expand(B, T, T)
        rows = []
        for t in range(T):
            s = (q[:, t : t + 1] @ k.transpose(1, 2)).squeeze(1) / math.sqrt(k.shape[-1])  # (B, T)
            visible = s.masked_fill(~full[:, t], float("-inf"))
            top = visible.amax(-1, keepdim=True)
            e = torch.exp(visible - torch.where(top.isfinite(), top, 0.0).detach())
            rows.append(e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny))
        weights = torch.stack(rows, dim=1)  # (B, T, T)
        return self.dropout(weights) @ v, weights


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK, "divide_by_dk", SADivideByDk, "mistake", "I divided by d_k, not by sqrt(d_k)."
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_dv",
        SAScaleByDv,
        "mistake",
        "I divided by sqrt of v's last dimension (d_v) instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_din",
        SAScaleByDin,
        "mistake",
        "I divided by sqrt of the input width d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "one_matrix_for_q_and_k",
        SAOneMatrixForQK,
        "mistake",
        "I used W_q for both the queries and the keys.",
    ),
    BlindCase(
        CHECK,
        "values_from_W_k",
        SAValuesFromWk,
        "mistake",
        "I computed the values with W_k (copy-paste), not W_v.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1 of (B, T, T), which is the query axis.",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        SAKeysTimesQueries,
        "mistake",
        "I computed the scores as K Q^T instead of Q K^T.",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        SAWeightsReturnedTransposed,
        "mistake",
        "I returned the weights transposed (row = key); the output itself is right.",
    ),
    BlindCase(
        CHECK,
        "output_from_transposed_weights",
        SAOutputFromTransposed,
        "mistake",
        "I mixed the values with the transposed weights: weights^T V.",
    ),
    BlindCase(
        CHECK, "mask_ignored", SAMaskIgnored, "mistake", "I never applied the mask argument."
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        SAMaskTrueBlocks,
        "mistake",
        "I filled -inf where the mask is True, as nn.MultiheadAttention reads masks.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        SAMaskedScoresZero,
        "mistake",
        "I multiplied the scores by the mask, so masked scores are 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        SALinearWithBias,
        "mistake",
        "I used nn.Linear for the three matrices but left their biases on.",
    ),
    BlindCase(
        CHECK,
        "linear_no_bias_bmm",
        SALinearNoBias,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v; torch.bmm for both products.",
    ),
    BlindCase(
        CHECK,
        "einsum_finfo_min",
        SAEinsum,
        "correct",
        "einsum throughout; masked scores set to the dtype's lowest number, rows with no key "
        "zeroed.",
    ),
    BlindCase(
        CHECK,
        "query_loop_with_dropout_arg",
        SAQueryLoop,
        "correct",
        "One query at a time with a max-subtracted exp; an extra dropout argument (default 0).",
    ),
]
