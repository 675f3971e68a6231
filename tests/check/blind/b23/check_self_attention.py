"""Blind set B23, check_self_attention (chapter 8): single-head self-attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _SA(nn.Module):
    """The three matrices as the chapter stores them; the subclasses write ``forward``."""

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
        weights = _masked_softmax(q @ k.transpose(1, 2), mask)
        return weights @ v, weights


class SADivideByDk(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _masked_softmax(q @ k.transpose(1, 2) / k.shape[-1], mask)
        return weights @ v, weights


class SAScaleByDin(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        d = x.shape[-1]  # the size of each vector
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(d), mask)
        return weights @ v, weights


class SAScaleByDv(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAQueryMatrixTwice(_SA):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # copy-pasted from the line above
        v = x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(k.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ v, weights


class SAKeysTimesQueries(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = k @ q.transpose(1, 2) / math.sqrt(q.shape[-1])  # K Q^T
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAWeightsReturnedTransposed(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # (B, T_k, T_q) for the heat map


class SAMixWithTransposedWeights(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights.transpose(1, 2) @ v, weights  # each value spread over the queries


class SAMaskIgnored(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SATrueBlocks(_SA):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # hide where the mask is set
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SAValuesAreInputs(_SA):
    def forward(self, x, mask=None):
        q, k, _ = self.qkv(x)
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # mix the tokens themselves


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
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
        scores = torch.bmm(q, k.transpose(1, 2)) * q.size(-1) ** -0.5
        weights = _masked_softmax(scores, mask)
        return torch.bmm(weights, v), weights


class SAEinsum(_SA):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / math.sqrt(self.W_k.shape[1])
        if mask is not None:
            scores = torch.where(mask, scores, -torch.inf)
            empty = torch.isneginf(scores).all(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0).softmax(-1).masked_fill(empty, 0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAFusedProjection(_SA):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        qkv = x @ torch.cat([self.W_q, self.W_k, self.W_v], dim=1)  # one product for all three
        q, k, v = qkv.split([d_k, d_k, self.W_v.shape[1]], dim=-1)
        weights = _masked_softmax(q @ k.mT / math.sqrt(d_k), mask)
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            out = weights @ v
        return out, weights


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I did not scale the scores"),
    BlindCase(CHECK, "divide_by_dk", SADivideByDk, "mistake", "I divided by d_k, not sqrt(d_k)"),
    BlindCase(
        CHECK,
        "scale_by_din",
        SAScaleByDin,
        "mistake",
        "I scaled by sqrt of the input size x.shape[-1]",
    ),
    BlindCase(CHECK, "scale_by_dv", SAScaleByDv, "mistake", "I scaled by sqrt of the size of v"),
    BlindCase(
        CHECK,
        "query_matrix_twice",
        SAQueryMatrixTwice,
        "mistake",
        "I used W_q for the keys too (copy-paste)",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        SAKeysTimesQueries,
        "mistake",
        "I computed K Q^T instead of Q K^T",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        SAWeightsReturnedTransposed,
        "mistake",
        "I returned the weights transposed, keys as rows",
    ),
    BlindCase(
        CHECK,
        "mix_with_transposed_weights",
        SAMixWithTransposedWeights,
        "mistake",
        "I mixed the values with weights^T @ v",
    ),
    BlindCase(
        CHECK, "mask_ignored", SAMaskIgnored, "mistake", "I accepted a mask but never used it"
    ),
    BlindCase(
        CHECK, "true_blocks", SATrueBlocks, "mistake", "I filled -inf where the mask is True"
    ),
    BlindCase(
        CHECK,
        "values_are_inputs",
        SAValuesAreInputs,
        "mistake",
        "I mixed x itself instead of V = x W_v",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        SALinearWithBias,
        "mistake",
        "I used nn.Linear layers and kept their default bias",
    ),
    BlindCase(
        CHECK,
        "linear_no_bias",
        SALinearNoBias,
        "correct",
        "bias-free nn.Linear layers, bmm and a multiplication by d_k ** -0.5",
    ),
    BlindCase(
        CHECK,
        "einsum",
        SAEinsum,
        "correct",
        "einsum for the projections and both products, torch.where for the mask",
    ),
    BlindCase(
        CHECK,
        "fused_projection",
        SAFusedProjection,
        "correct",
        "one product with the three matrices concatenated, then split; "
        "F.scaled_dot_product_attention when there is no mask",
    ),
]
