"""Blind set B16, check_self_attention (chapter 8): single-head self-attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Matrices(nn.Module):
    """The three (d_in, d) parameters under the book's names; subclasses write their forward."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.d_k = d_k
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SANoScale(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2), mask)
        return weights @ v, weights


class SADivideByDk(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / self.d_k, mask)
        return weights @ v, weights


class SAScaleByDin(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        d = x.shape[-1]  # the width of the vectors
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(d), mask)
        return weights @ v, weights


class SAQueriesAsKeys(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = x @ self.W_q
        k = x @ self.W_q  # copy-pasted line, W_q left in
        v = x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))
        return weights @ v, weights


class SAWeightsTransposed(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return weights @ v, weights.transpose(1, 2)  # (key, query) as in the notes' figure


class SAOutputFromTransposedWeights(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        out = weights.transpose(1, 2) @ v  # b_i = sum_j alpha_{j,i} v_j
        return out, weights


class SAMaskIgnored(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), dim=-1)
        return weights @ v, weights


class SAMaskPolarity(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = masked
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return weights @ v, weights


class SAReturnsOutputOnly(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(self.d_k), mask)
        return weights @ v  # the layer's output


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    """Bias-free nn.Linear layers under the three names (weights stored transposed)."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.mT / math.sqrt(q.shape[-1])
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAEinsum(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / self.d_k**0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = scores.softmax(dim=-1)
        if mask is not None:
            weights = weights * mask.any(dim=-1, keepdim=True)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAOneProductWithExtras(nn.Module):
    """The three matrices applied in one product of their concatenation; a dropout argument."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0) -> None:
        super().__init__()
        self.d_k, self.d_v = d_k, d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, self.d_v))
        for W in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(W)
        self.dropout = nn.Dropout(dropout)

    def project(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        qkv = x @ torch.cat([self.W_q, self.W_k, self.W_v], dim=1)
        return qkv.split([self.d_k, self.d_k, self.d_v], dim=-1)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.project(x)
        scores = torch.baddbmm(
            torch.zeros(1, 1, 1, dtype=x.dtype), q, k.transpose(1, 2), alpha=self.d_k**-0.5
        )
        weights = _masked_softmax(scores, mask)
        return self.dropout(weights) @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "no_scale",
        SANoScale,
        "mistake",
        "I forgot to divide the scores by sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "divided_by_d_k",
        SADivideByDk,
        "mistake",
        "I divided the scores by d_k instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d_in",
        SAScaleByDin,
        "mistake",
        "I scaled by the square root of x's width, d_in, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "w_q_used_for_keys",
        SAQueriesAsKeys,
        "mistake",
        "I copied the query line for the keys and left W_q in it, so the keys are the queries.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, so each key's column sums to 1 instead of each query's "
        "row.",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, a row per key, as the notes draw alpha_{1,i}.",
    ),
    BlindCase(
        CHECK,
        "output_from_transposed_weights",
        SAOutputFromTransposedWeights,
        "mistake",
        "I mixed the values with weights.transpose(1, 2) @ v, summing over the queries.",
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
        "I filled -inf where the mask is True, reading True as 'hidden'.",
    ),
    BlindCase(
        CHECK,
        "returns_output_only",
        SAReturnsOutputOnly,
        "mistake",
        "I returned only the output, not the pair (out, weights).",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_layers",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v instead of nn.Parameter matrices.",
    ),
    BlindCase(
        CHECK,
        "einsum_finfo_fill",
        SAEinsum,
        "correct",
        "einsum for every product, the mask filled with finfo.min and empty rows zeroed.",
    ),
    BlindCase(
        CHECK,
        "one_projection_baddbmm",
        SAOneProductWithExtras,
        "correct",
        "One product with the concatenated matrices split in three, torch.baddbmm with alpha "
        "for the scaled scores, xavier init and a dropout argument defaulting to 0.",
    ),
]
