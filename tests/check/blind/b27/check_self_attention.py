"""Blind set B27, check_self_attention (chapter 8): single-head self-attention layers as readers
write them."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, as chapter 6 taught it."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _SA(nn.Module):
    """The three matrices as the chapter stores them; the mistakes differ in forward."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def _qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


# ---------------------------------------------------------------- mistakes


class SAScaleAfterSoftmax(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(k.shape[-1])
        return weights @ v, weights


class SAScaleByDin(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # the input's dimension
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SASoftmaxDimOne(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])  # (B, T, T)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)  # over the T axis
        return torch.bmm(weights, v), weights


class SAKeysAndValuesSwapped(_SA):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_v  # the keys
        v = x @ self.W_k  # the values
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAMaskAfterSoftmax(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # hidden keys get weight 0
        return weights @ v, weights


class SAWeightsFromUnmaskedScores(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        out = _masked_softmax(scores, mask) @ v
        return out, scores.softmax(-1)  # the attention map, to look at


class SAReturnsOutOnly(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v


class SATransposedOnBothSides(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # K Q^T, row = key
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAResidualAdded(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return x + weights @ v, weights  # keep the token's own vector


class SAMaskRowsInsteadOfColumns(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            mask = mask.transpose(-2, -1)  # row = query, so the mask's keys go on the rows
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAFillMinus1e4(_SA):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e4)  # large enough, and safe in float16
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SABiasFreeLinear(nn.Module):
    """Bias-free nn.Linear layers, which the chapter accepts too."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.baddbmm(
            x.new_zeros(1, 1, 1), q, k.transpose(1, 2), alpha=q.shape[-1] ** -0.5
        )
        weights = _masked_softmax(scores, mask)
        return torch.bmm(weights, v), weights


class SAEinsum(_SA):
    """einsum for the projections and the two products."""

    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / math.sqrt(self.W_q.shape[1])
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
            empty = torch.isinf(scores).all(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0).softmax(-1).masked_fill(empty, 0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAOneSentenceAtATime(nn.Module):
    """A loop over the batch; the matrices made with torch.empty and an explicit init."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.d_k = d_k
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, d_v or d_k))
        for w in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(w)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        if mask is not None:
            mask = mask.expand(B, T, T)
        outs, maps = [], []
        for b in range(B):
            q, k, v = x[b] @ self.W_q, x[b] @ self.W_k, x[b] @ self.W_v
            s = q @ k.T / math.sqrt(self.d_k)  # 2-D here, so .T is the transpose
            w = _masked_softmax(s, None if mask is None else mask[b])
            outs.append(w @ v)
            maps.append(w)
        return torch.stack(outs), torch.stack(maps)


CASES = [
    BlindCase(
        CHECK,
        "scale_after_softmax",
        SAScaleAfterSoftmax,
        "mistake",
        "I divided the weights by sqrt(d_k) after the softmax instead of the scores before it.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_d_in",
        SAScaleByDin,
        "mistake",
        "I divided by sqrt(d_in), the input's width, instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        SASoftmaxDimOne,
        "mistake",
        "I took the softmax over dim=1, thinking of it as 'the T axis', which is the queries.",
    ),
    BlindCase(
        CHECK,
        "keys_values_swapped",
        SAKeysAndValuesSwapped,
        "mistake",
        "I computed the keys with W_v and the values with W_k.",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        SALinearWithBias,
        "mistake",
        "I used nn.Linear layers and kept their default bias.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        SAMaskAfterSoftmax,
        "mistake",
        "I zeroed the hidden keys' weights after the softmax, so the rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "returned_map_unmasked",
        SAWeightsFromUnmaskedScores,
        "mistake",
        "The output is masked, but the weights I return are the softmax of the unmasked scores.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        SAReturnsOutOnly,
        "mistake",
        "My forward returns only out, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "scores_K_times_Q",
        SATransposedOnBothSides,
        "mistake",
        "I computed the scores as K Q^T, so each row belongs to a key, not a query.",
    ),
    BlindCase(
        CHECK,
        "residual_added",
        SAResidualAdded,
        "mistake",
        "I added x to the output, a residual connection the chapter does not have.",
    ),
    BlindCase(
        CHECK,
        "mask_transposed",
        SAMaskRowsInsteadOfColumns,
        "mistake",
        "I transposed the mask before using it, thinking its keys should be on the rows.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e4",
        SAFillMinus1e4,
        "mistake",
        "I filled hidden scores with -1e4 so it also fits in float16; a query whose keys are all "
        "hidden spreads its weight over them instead of getting zeros.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_baddbmm",
        SABiasFreeLinear,
        "correct",
        "Bias-free nn.Linear layers for the projections; baddbmm with alpha = d_k ** -0.5.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        SAEinsum,
        "correct",
        "einsum for the three projections and both products; logical_not for the fill.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sentences",
        SAOneSentenceAtATime,
        "correct",
        "A loop over the sentences of the batch, 2-D products; Xavier init, d_v or d_k.",
    ),
]
