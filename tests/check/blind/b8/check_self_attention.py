"""Blind set B8, check_self_attention (chapter 8): single-head self-attention with W_q, W_k, W_v."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class ScaleByDIn(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class ScaleByDV(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class QueryMatrixForKeys(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_q, x @ self.W_v  # copy-paste: W_q twice
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SoftmaxDim1(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)  # (B, T, T): dim 1 is the queries
        return weights @ v, weights


class WeightsReturnedKeyMajor(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # so columns are queries, as in the notes


class MaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class MaskPolarityFlipped(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = _msoftmax(scores, None if mask is None else ~mask)
        return weights @ v, weights


class StoredAsLinearLayout(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_k, d_in) / math.sqrt(d_in))  # (out, in)
        self.W_k = nn.Parameter(torch.randn(d_k, d_in) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_v, d_in) / math.sqrt(d_in))

    def forward(self, x, mask=None):
        q, k, v = F.linear(x, self.W_q), F.linear(x, self.W_k), F.linear(x, self.W_v)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class ValueWidthIgnored(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))  # d_v not used

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class KeysReshapedNotTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        B, T, d_k = k.shape
        scores = q @ k.reshape(B, d_k, T) / math.sqrt(d_k)  # reshape instead of transpose
        weights = _msoftmax(scores, mask)
        return weights @ v, weights


class MaskAfterSoftmax(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # rows no longer sum to 1
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class EinsumProjections(_Base):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) / math.sqrt(q.shape[-1])
        weights = _msoftmax(scores, mask)
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class ValuesProjectedAfterMixing(_Base):
    def forward(self, x, mask=None):
        q, k = x @ self.W_q, x @ self.W_k
        weights = _msoftmax(q @ k.mT * q.shape[-1] ** -0.5, mask)
        return (weights @ x) @ self.W_v, weights  # (A X) W_v = A (X W_v)


class FusedProjectionFloat64(_Base):
    def forward(self, x, mask=None):
        dtype = x.dtype
        d_k = self.W_q.shape[1]
        W = torch.cat([self.W_q, self.W_k, self.W_v], dim=1).double()
        q, k, v = (x.double() @ W).split([d_k, d_k, self.W_v.shape[1]], dim=-1)
        weights = _msoftmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d_k), mask)
        return torch.bmm(weights, v).to(dtype), weights.to(dtype)


CASES = [
    BlindCase(
        CHECK,
        "scale_by_d_in",
        ScaleByDIn,
        "mistake",
        "I scaled by sqrt of the input width d_in instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_v",
        ScaleByDV,
        "mistake",
        "I scaled by sqrt(d_v), the width of the values, instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "query_matrix_for_keys",
        QueryMatrixForKeys,
        "mistake",
        "copy-paste slip: I computed the keys with W_q too",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        SoftmaxDim1,
        "mistake",
        "I wrote softmax(dim=1), which for (B, T, T) scores is the query axis",
    ),
    BlindCase(
        CHECK,
        "weights_returned_key_major",
        WeightsReturnedKeyMajor,
        "mistake",
        "I returned the weights transposed so that columns are queries, like the notes' figure",
    ),
    BlindCase(CHECK, "mask_ignored", MaskIgnored, "mistake", "I never applied the mask argument"),
    BlindCase(
        CHECK,
        "mask_polarity_flipped",
        MaskPolarityFlipped,
        "mistake",
        "I hid the keys where the mask is True instead of where it is False",
    ),
    BlindCase(
        CHECK,
        "stored_as_linear_layout",
        StoredAsLinearLayout,
        "mistake",
        "I stored the matrices as (d_k, d_in), nn.Linear's (out, in) layout, and used F.linear",
    ),
    BlindCase(
        CHECK,
        "value_width_ignored",
        ValueWidthIgnored,
        "mistake",
        "I made W_v (d_in, d_k) and ignored the d_v argument",
    ),
    BlindCase(
        CHECK,
        "keys_reshaped_not_transposed",
        KeysReshapedNotTransposed,
        "mistake",
        "I used k.reshape(B, d_k, T) instead of k.transpose(1, 2)",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        MaskAfterSoftmax,
        "mistake",
        "I zeroed the masked weights after the softmax instead of masking the scores",
    ),
    BlindCase(
        CHECK,
        "einsum_projections",
        EinsumProjections,
        "correct",
        "all projections and products with einsum",
    ),
    BlindCase(
        CHECK,
        "values_projected_after_mixing",
        ValuesProjectedAfterMixing,
        "correct",
        "mixed the inputs first and applied W_v after: (A X) W_v",
    ),
    BlindCase(
        CHECK,
        "fused_projection_float64",
        FusedProjectionFloat64,
        "correct",
        "one concatenated projection split in three, bmm in float64, cast back",
    ),
]
