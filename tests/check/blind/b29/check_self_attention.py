"""Blind set B29, check_self_attention (chapter 8): single-head self-attention with W_q, W_k, W_v."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that lie elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Matrices(nn.Module):
    """The three ``(d_in, d)`` parameter matrices, as the chapter stores them."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


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


class SAScaleByInputWidth(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAScaleAfterSoftmax(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
        return weights @ v, weights


class SAOneMatrixForQK(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = k = x @ self.W_q  # queries and keys live in the same space
        v = x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAKeysTimesQueries(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # alpha_{1,i} = k^i . q^1
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAValuesNotProjected(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # b^i mixes the inputs a^j


class SAReturnsWeightsFirst(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights, weights @ v  # A' first, then O


class SAMaskTimesScores(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores * mask  # hidden keys score 0
        weights = scores.softmax(dim=-1)
        return weights @ v, weights


class SAFillMinus1e9(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = scores.softmax(dim=-1)
        return weights @ v, weights


class SAPlainTensors(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = torch.randn(d_in, d_k) / math.sqrt(d_in)  # plain tensors, no nn.Parameter
        self.W_k = torch.randn(d_in, d_k) / math.sqrt(d_in)
        self.W_v = torch.randn(d_in, d_v) / math.sqrt(d_in)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAWithBiases(_Matrices):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__(d_in, d_k, d_v)
        self.b_q = nn.Parameter(0.1 * torch.randn(d_k))  # every layer has a bias
        self.b_k = nn.Parameter(0.1 * torch.randn(d_k))
        self.b_v = nn.Parameter(0.1 * torch.randn(self.W_v.shape[1]))

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q + self.b_q, x @ self.W_k + self.b_k, x @ self.W_v + self.b_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SATransposedWeightsProduct(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q.T, x @ self.W_k.T, x @ self.W_v.T  # like nn.Linear: x W^T
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    """Bias-free nn.Linear layers under the same names, which the chapter accepts too."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.mT * q.shape[-1] ** -0.5, mask)
        return weights @ v, weights


class SAStackedProjection(_Matrices):
    """One product with [W_q | W_k | W_v], then split; einsum for the scores and output."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        qkv = x @ torch.cat([self.W_q, self.W_k, self.W_v], dim=1)
        q, k, v = qkv.split([d_k, d_k, self.W_v.shape[1]], dim=-1)
        scores = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(d_k)
        if mask is not None:
            mask = mask.expand_as(scores)
            seen = mask.any(-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~seen, 0.0)
            weights = scores.softmax(-1) * seen
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bts,bsd->btd", weights, v), weights


class SAFusedOutput(_Matrices):
    """The output from F.scaled_dot_product_attention, the weights computed alongside; queries
    with no visible key get zeros, as in the chapter."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v), weights
        seen = mask.any(-1, keepdim=True)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~seen)
        return out.masked_fill(~seen, 0.0), weights


CASES = [
    BlindCase(
        CHECK,
        "d_v_defaults_to_d_in",
        SADvDefaultsToDin,
        "mistake",
        "When d_v is None I gave W_v the input's width d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_by_input_width",
        SAScaleByInputWidth,
        "mistake",
        "I divided the scores by sqrt(d_in), the width of x, instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "scale_after_softmax",
        SAScaleAfterSoftmax,
        "mistake",
        "I divided A' by sqrt(d_k) after the softmax instead of A before it.",
    ),
    BlindCase(
        CHECK,
        "one_matrix_for_q_and_k",
        SAOneMatrixForQK,
        "mistake",
        "I computed both the queries and the keys with W_q.",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        SAKeysTimesQueries,
        "mistake",
        "I wrote the scores as K Q^T, following alpha_{1,i} = k^i . q^1, so row i belongs to key "
        "i.",
    ),
    BlindCase(
        CHECK,
        "values_not_projected",
        SAValuesNotProjected,
        "mistake",
        "I mixed the inputs x with the weights and never used W_v.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        SAReturnsWeightsFirst,
        "mistake",
        "I return (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "scores_times_mask",
        SAMaskTimesScores,
        "mistake",
        "I multiplied the scores by the mask, so hidden keys score 0 and still get weight.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        SAFillMinus1e9,
        "mistake",
        "I filled hidden scores with -1e9; a query that sees no key spreads its weight evenly.",
    ),
    BlindCase(
        CHECK,
        "plain_tensors",
        SAPlainTensors,
        "mistake",
        "I stored W_q, W_k and W_v as plain tensors, not nn.Parameter, so the module has no "
        "parameters to train.",
    ),
    BlindCase(
        CHECK,
        "added_biases",
        SAWithBiases,
        "mistake",
        "I added a learned bias to each of the three projections.",
    ),
    BlindCase(
        CHECK,
        "projection_with_transpose",
        SATransposedWeightsProduct,
        "mistake",
        "I wrote x @ W_q.T as nn.Linear does, though my matrices are stored (d_in, d_k).",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_layers",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v; k.mT and the scale as a power.",
    ),
    BlindCase(
        CHECK,
        "stacked_projection_einsum",
        SAStackedProjection,
        "correct",
        "One product with the three matrices concatenated, split into q, k, v; einsum for the "
        "rest.",
    ),
    BlindCase(
        CHECK,
        "fused_output",
        SAFusedOutput,
        "correct",
        "The output from F.scaled_dot_product_attention, the weights computed beside it; empty "
        "rows set to zero.",
    ),
]
