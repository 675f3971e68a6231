"""Blind set B24, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _Additive(nn.Module):
    """The book's three layers; each case below changes only ``forward`` (or the layers)."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def pairs(self, queries: Tensor, keys: Tensor) -> Tensor:
        """W_q q + W_k k for every (query, key): (B, T_q, T_k, hidden)."""
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.pairs(queries, keys)).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.pairs(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddReLU(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.pairs(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddTanhEachSide(_Additive):
    def forward(self, queries, keys, values, mask=None):
        q = torch.tanh(self.W_q(queries)).unsqueeze(-2)
        k = torch.tanh(self.W_k(keys)).unsqueeze(-3)
        scores = self.w_v(q + k).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddAxesSwapped(_Additive):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-3)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(-2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        if mask is not None:
            scores = scores.masked_fill(~mask.transpose(-2, -1), float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=-1)).transpose(-2, -1)  # (B, T_q, T_k)
        return weights @ values, weights


class AddMaskInverted(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, None if mask is None else ~mask)
        return weights @ values, weights


class AddMaskUnused(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddLinearBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # bias left on
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        weights = _msoftmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AddFillMinus1e9(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddScaledLikeDot(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        scores = scores / math.sqrt(self.W_q.out_features)  # scaled, as dot-product attention
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddWeightsTimesKeys(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ keys, weights


class AddNoSqueeze(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys)))  # (B, T_q, T_k, 1)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask.unsqueeze(-1)
        weights = weights.squeeze(-1)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Additive):
    def forward(self, queries, keys, values, mask=None):
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        features = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, T_q, T_k, h)
        scores = torch.einsum("bqkh,h->bqk", features, self.w_v.weight[0])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            weights = torch.nan_to_num(scores.softmax(-1)).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqk,bkv->bqv", weights, values), weights


class AddQueryLoop(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        k = self.W_k(keys) if projected_keys is None else projected_keys  # (B, T_k, h)
        T_q = queries.shape[-2]
        if mask is not None:
            mask = mask.expand(*mask.shape[:-2], T_q, mask.shape[-1])
        rows = []
        for t in range(T_q):
            q = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            s = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k)
            if mask is not None:
                m = mask[..., t, :]
                s = s.masked_fill(~m, float("-inf"))
                keep = m.any(-1, keepdim=True)
                w = s.masked_fill(~keep, 0.0).softmax(-1) * keep
            else:
                w = s.softmax(-1)
            rows.append(w)
        weights = torch.stack(rows, dim=-2)  # (B, T_q, T_k)
        return self.dropout(weights) @ values, weights


class AddMatmulWv(_Additive):
    def forward(self, queries, keys, values, mask=None):
        hidden = (self.pairs(queries, keys)).tanh()
        scores = (hidden @ self.w_v.weight.T)[..., 0]  # (B, T_q, T_k)
        if mask is None:
            mask = torch.ones_like(scores, dtype=torch.bool)
        visible = scores.masked_fill(~mask, float("-inf"))
        any_key = mask.any(-1, keepdim=True)
        lse = torch.logsumexp(visible.masked_fill(~any_key, 0.0), dim=-1, keepdim=True)
        weights = torch.exp(visible - lse).masked_fill(~any_key, 0.0)
        return torch.matmul(weights, values), weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfterWv,
        "mistake",
        "I applied w_v first and the tanh to the score: tanh(w_v^T (W_q q + W_k k)).",
    ),
    BlindCase(CHECK, "relu_not_tanh", AddReLU, "mistake", "I used ReLU instead of tanh."),
    BlindCase(
        CHECK,
        "tanh_on_each_side",
        AddTanhEachSide,
        "mistake",
        "I squashed the projected query and the projected key separately, then added them.",
    ),
    BlindCase(
        CHECK,
        "axes_swapped_softmax_over_queries",
        AddAxesSwapped,
        "mistake",
        "I broadcast the queries on the key axis and the keys on the query axis, so my softmax "
        "runs over the queries; I transposed the weights back at the end.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        AddMaskInverted,
        "mistake",
        "I passed ~mask to the softmax, as if True meant padding.",
    ),
    BlindCase(
        CHECK, "mask_unused", AddMaskUnused, "mistake", "I accepted mask but never applied it."
    ),
    BlindCase(
        CHECK,
        "biases_on_W_q_W_k",
        AddLinearBiases,
        "mistake",
        "I forgot bias=False on W_q and W_k, so there are two extra biases inside the tanh.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFillMinus1e9,
        "mistake",
        "I masked with -1e9, so a query with no visible key spreads its weight over all keys.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_hidden",
        AddScaledLikeDot,
        "mistake",
        "I divided the scores by sqrt(hidden_dim) as in dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        AddWeightsTimesKeys,
        "mistake",
        "I returned weights @ keys instead of weights @ values.",
    ),
    BlindCase(
        CHECK,
        "no_squeeze",
        AddNoSqueeze,
        "mistake",
        "I forgot squeeze(-1) after w_v, so my softmax ran over that axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        AddEinsum,
        "correct",
        "einsum with the three weight matrices; nan_to_num, then zeros for rows with no key.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddQueryLoop,
        "correct",
        "One query at a time, stacked; extra dropout and projected_keys arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "matmul_w_v_logsumexp",
        AddMatmulWv,
        "correct",
        "w_v as hidden @ w_v.weight.T; the weights as exp(score - logsumexp) over the visible "
        "keys.",
    ),
]
