"""Blind set B32, check_self_attention (chapter 8): single-head self-attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The three matrices as the book stores them; forward differs from class to class."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


# ---------------------------------------------------------------- mistakes


class SAScaleByDv(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAScaleByDin(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAScaleBySeqLen(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[1]), mask)
        return weights @ v, weights


class SAKeysDotQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # row = key
        weights = _msoftmax(scores, mask)
        return weights @ v, weights


class SAQueryMatrixForKeys(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # copy-paste slip
        v = x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAMaskAfterSoftmax(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # hidden keys get 0, no renormalization
        return weights @ v, weights


class SASigmoidWeights(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = torch.sigmoid(scores)  # each pair scored independently
        if mask is not None:
            weights = weights * mask
        return weights @ v, weights


class SASoftmaxOverAllPairs(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        B, T, _ = scores.shape
        weights = scores.reshape(B, T * T).softmax(-1).reshape(B, T, T)  # one distribution
        return weights @ v, weights


class SAValuesNotProjected(_Base):
    def forward(self, x, mask=None):
        q, k, _ = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # mixed the inputs themselves


class SACachesKeys(_Base):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__(d_in, d_k, d_v)
        self._kv = None

    def forward(self, x, mask=None):
        q = x @ self.W_q
        if self._kv is None or self._kv[0].shape[:2] != x.shape[:2]:
            self._kv = (x @ self.W_k, x @ self.W_v)  # cached to save work on the next call
        k, v = self._kv
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAOnlyOutput(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v


class SAMaskTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = _msoftmax(scores, None if mask is None else mask.transpose(-2, -1))
        return weights @ v, weights


class SADoubleScale(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        d_k = q.shape[-1]
        q = q / math.sqrt(d_k)  # scaled the queries ...
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)  # ... and the scores
        return weights @ v, weights


class SAWeightsTransposedOut(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights.transpose(-2, -1) @ v, weights  # (key, query) used for mixing


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
        weights = _msoftmax(scores, mask)
        return torch.bmm(weights, v), weights


class SAEinsum(_Base):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        scores = torch.einsum("bik,bjk->bij", q * q.shape[-1] ** -0.5, k)
        weights = _msoftmax(scores, mask)
        return torch.einsum("bij,bjv->biv", weights, torch.einsum("btd,dv->btv", x, self.W_v)), (
            weights
        )


class SAMixThenProject(_Base):
    def forward(self, x, mask=None):
        q, k = x @ self.W_q, x @ self.W_k
        weights = _msoftmax(q @ k.mT / math.sqrt(self.W_k.shape[1]), mask)
        return (weights @ x) @ self.W_v, weights  # (A X) W_v = A (X W_v)


class SAFusedOut(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v), weights
        has_key = mask.any(-1, keepdim=True)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
        return out.masked_fill(~has_key, 0.0), weights


CASES = [
    BlindCase(
        CHECK,
        "scale_by_sqrt_dv",
        SAScaleByDv,
        "mistake",
        "I divided by sqrt of the values' size d_v instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_din",
        SAScaleByDin,
        "mistake",
        "I divided by sqrt of the input size d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_T",
        SAScaleBySeqLen,
        "mistake",
        "I divided by sqrt(T), the sequence length.",
    ),
    BlindCase(
        CHECK,
        "keys_dot_queries",
        SAKeysDotQueries,
        "mistake",
        "I computed K Q^T instead of Q K^T, so each row belongs to a key.",
    ),
    BlindCase(
        CHECK,
        "W_q_for_keys",
        SAQueryMatrixForKeys,
        "mistake",
        "I used W_q for the keys too (a copy-paste slip).",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        SAMaskAfterSoftmax,
        "mistake",
        "I zeroed the hidden keys' weights after the softmax, without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_weights",
        SASigmoidWeights,
        "mistake",
        "I used a sigmoid of each score instead of a softmax over the keys.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_all_pairs",
        SASoftmaxOverAllPairs,
        "mistake",
        "I flattened the (T, T) scores and took one softmax over all pairs.",
    ),
    BlindCase(
        CHECK,
        "values_not_projected",
        SAValuesNotProjected,
        "mistake",
        "I mixed x itself instead of V = x W_v.",
    ),
    BlindCase(
        CHECK,
        "caches_keys_values",
        SACachesKeys,
        "mistake",
        "I cached K and V on the module after the first call and reused them for later inputs "
        "of the same shape.",
    ),
    BlindCase(
        CHECK,
        "returns_only_out",
        SAOnlyOutput,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "mask_transposed",
        SAMaskTransposed,
        "mistake",
        "I transposed the mask, thinking its rows were keys.",
    ),
    BlindCase(
        CHECK,
        "scaled_twice",
        SADoubleScale,
        "mistake",
        "I divided the queries by sqrt(d_k) and then the scores again, so the scale is 1 / d_k.",
    ),
    BlindCase(
        CHECK,
        "mix_with_transposed_weights",
        SAWeightsTransposedOut,
        "mistake",
        "I mixed the values with weights^T @ v.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_bmm",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v (which the chapter accepts), and bmm.",
    ),
    BlindCase(
        CHECK,
        "einsum_scaled_queries",
        SAEinsum,
        "correct",
        "einsum for every product; the scale applied to q before the product.",
    ),
    BlindCase(
        CHECK,
        "mix_then_project",
        SAMixThenProject,
        "correct",
        "The weights mix x first and W_v is applied afterwards: (A X) W_v = A (X W_v).",
    ),
    BlindCase(
        CHECK,
        "fused_out",
        SAFusedOut,
        "correct",
        "out from F.scaled_dot_product_attention, weights from a masked softmax.",
    ),
]
