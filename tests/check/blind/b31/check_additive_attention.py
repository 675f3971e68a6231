"""Blind set B31, check_additive_attention (chapter 6): w_v^T tanh(W_q q + W_k k) as a module."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The right layers; the mistakes below change only forward (unless said otherwise)."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, T_q, T_k, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.features(queries, keys)).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddReLU(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias left on
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddNoPairs(_Base):
    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries) + self.W_k(keys))  # (B, T, h), position by position
        scores = self.w_v(hidden).transpose(-2, -1)  # (B, 1, T_k)
        weights = _msoftmax(scores.expand(*queries.shape[:-1], keys.shape[-2]), mask)
        return weights @ values, weights


class AddSwappedUnsqueeze(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-3)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(-2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        scores = scores.reshape(*scores.shape[:-2], queries.shape[-2], keys.shape[-2])
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-2))
        return weights @ values, weights


class AddMaskInverted(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, None if mask is None else ~mask)  # True = padding
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)  # the mask is for the Transformer later
        return weights @ values, weights


class AddMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, values), weights


class AddReturnsWeightsFirst(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights, weights @ values


class AddTanhSeparately(_Base):
    def forward(self, queries, keys, values, mask=None):
        q_score = self.w_v(torch.tanh(self.W_q(queries)))  # (B, T_q, 1)
        k_score = self.w_v(torch.tanh(self.W_k(keys))).transpose(-2, -1)  # (B, 1, T_k)
        weights = _msoftmax(q_score + k_score, mask)
        return weights @ values, weights


class AddScaledBySqrtHidden(_Base):
    def forward(self, queries, keys, values, mask=None):
        hidden = self.W_q.out_features
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores / math.sqrt(hidden), mask)  # scaled, as in chapter 6.3
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        feats = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, T_q, T_k, h)
        scores = torch.einsum("bqkh,h->bqk", feats, self.w_v.weight[0])
        weights = _msoftmax(scores, mask)
        return torch.einsum("bqk,bkv->bqv", weights, values), weights


class AddWithOptions(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        k = self.W_k(keys) if projected_keys is None else projected_keys
        scores = self.w_v(torch.tanh(self.W_q(queries)[..., :, None, :] + k[..., None, :, :]))
        scores = scores.squeeze(-1)
        if mask is not None:
            visible = mask.any(-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~visible, 0.0)
            weights = scores.softmax(-1) * visible
        else:
            weights = scores.softmax(-1)
        return self.dropout(weights) @ values, weights


class AddLoopOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[-2]):
            q = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=-2)  # (B, T_q, T_k)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddFloat64Inside(_Base):
    def forward(self, queries, keys, values, mask=None):
        dtype = values.dtype
        q = F.linear(queries.double(), self.W_q.weight.double())
        k = F.linear(keys.double(), self.W_k.weight.double())
        scores = F.linear(torch.tanh(q.unsqueeze(-2) + k.unsqueeze(-3)), self.w_v.weight.double())
        weights = _msoftmax(scores.squeeze(-1), mask)
        return (weights @ values.double()).to(dtype), weights.to(dtype)


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfterWv,
        "mistake",
        "I put the tanh after w_v: tanh(w_v(W_q q + W_k k)).",
    ),
    BlindCase(CHECK, "relu", AddReLU, "mistake", "I used ReLU instead of tanh."),
    BlindCase(
        CHECK,
        "linears_with_bias",
        AddWithBias,
        "mistake",
        "I left nn.Linear's default bias on in W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "no_pairwise_broadcast",
        AddNoPairs,
        "mistake",
        "I added W_q q and W_k k position by position, without unsqueezing to get every "
        "(query, key) pair.",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_swapped",
        AddSwappedUnsqueeze,
        "mistake",
        "I unsqueezed the queries at -3 and the keys at -2, got (T_k, T_q) scores and fixed "
        "the shape with reshape instead of a transpose.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2, the queries.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        AddMaskInverted,
        "mistake",
        "I read the mask as True = padding and passed ~mask.",
    ),
    BlindCase(CHECK, "mask_ignored", AddMaskIgnored, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddMinus1e9,
        "mistake",
        "I filled -1e9 where mask == 0 and used a plain softmax.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        AddReturnsWeightsFirst,
        "mistake",
        "I returned (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "tanh_on_each_side",
        AddTanhSeparately,
        "mistake",
        "I scored queries and keys separately, w_v(tanh(W_q q)) + w_v(tanh(W_k k)), so every "
        "query gets the same weights.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_hidden",
        AddScaledBySqrtHidden,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as for dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        AddEinsum,
        "correct",
        "Every product written with einsum on the layers' weights.",
    ),
    BlindCase(
        CHECK,
        "dropout_and_projected_keys",
        AddWithOptions,
        "correct",
        "Extra dropout (default 0) and projected_keys (default None) arguments, as the book's.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "The scores built one query at a time and stacked.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        AddFloat64Inside,
        "correct",
        "Computed in float64 with F.linear, cast back to the values' dtype.",
    ),
]
