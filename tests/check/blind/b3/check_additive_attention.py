"""Blind cases for check_additive_attention (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_additive_attention"


class _Layers(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def pairs(self, queries, keys):
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, T_q, T_k, h)


class NoTanh(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.pairs(queries, keys)).squeeze(-1)
        weights = masked_softmax(scores, mask)
        return weights @ values, weights


class TanhAfterWv(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.pairs(queries, keys))).squeeze(-1)
        weights = masked_softmax(scores, mask)
        return weights @ values, weights


class SoftmaxOverQueries(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ values, weights


class MaskIgnored(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class MaskInverted(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = masked_softmax(scores, None if mask is None else ~mask)
        return weights @ values, weights


class NoPairAxes(_Layers):
    def forward(self, queries, keys, values, mask=None):
        # (B, T_q, h) + (B, T_k, h): fine for one query, pairs query i with key i otherwise
        scores = self.w_v(torch.tanh(self.W_q(queries) + self.W_k(keys))).transpose(-2, -1)
        weights = masked_softmax(scores, mask)
        return weights @ values, weights


class DefaultBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        weights = masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class SumInsteadOfWv(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.pairs(queries, keys)).sum(dim=-1)
        weights = masked_softmax(scores, mask)
        return weights @ values, weights


class MixesTheKeys(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = masked_softmax(scores, mask)
        return weights @ keys, weights


class Minus1e9(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = scores.softmax(dim=-1)
        return weights @ values, weights


class EinsumScores(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries)  # (B, T_q, h)
        k = self.W_k(keys)  # (B, T_k, h)
        feats = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, T_q, T_k, h)
        scores = torch.einsum("bqkh,h->bqk", feats, self.w_v.weight[0])
        weights = masked_softmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class OneQueryAtATime(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h), the same for every query
        rows = []
        for t in range(queries.shape[1]):
            q_t = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q_t + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        weights = masked_softmax(scores, mask)
        return self.dropout(weights) @ values, weights


class HandMaskedSoftmax(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        if mask is not None:
            mask = torch.broadcast_to(mask, scores.shape)
            scores = scores.masked_fill(~mask, float("-inf"))
            any_key = mask.any(-1, keepdim=True)
            scores = torch.where(any_key, scores, torch.zeros_like(scores))
            weights = torch.softmax(scores, dim=-1) * any_key
        else:
            weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights, values), weights


CASES = [
    BlindCase(
        CHECK, "no_tanh", NoTanh, "mistake", "I forgot the tanh: score = w_v^T (W_q q + W_k k)"
    ),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        TanhAfterWv,
        "mistake",
        "I put the tanh after w_v: score = tanh(w_v^T (W_q q + W_k k))",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries, instead of the keys",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        MaskIgnored,
        "mistake",
        "I accepted the mask argument but never used it (plain softmax)",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        MaskInverted,
        "mistake",
        "I passed ~mask to the masked softmax, the opposite polarity",
    ),
    BlindCase(
        CHECK,
        "no_pair_axes",
        NoPairAxes,
        "mistake",
        "I added W_q q and W_k k without unsqueezing a query axis and a key axis, so with more "
        "than one query each query is paired with one key only",
    ),
    BlindCase(
        CHECK,
        "default_bias",
        DefaultBias,
        "mistake",
        "I left nn.Linear's default bias=True on W_q, W_k and w_v",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_wv",
        SumInsteadOfWv,
        "mistake",
        "I summed the tanh features over the hidden axis instead of applying w_v",
    ),
    BlindCase(
        CHECK,
        "mixes_the_keys",
        MixesTheKeys,
        "mistake",
        "I returned weights @ keys instead of weights @ values",
    ),
    BlindCase(
        CHECK,
        "minus_1e9",
        Minus1e9,
        "mistake",
        "I masked with -1e9 and a plain softmax, so a query with no visible key spreads its "
        "weight over the masked keys",
    ),
    BlindCase(
        CHECK,
        "einsum_scores",
        EinsumScores,
        "correct",
        "I indexed with None for the pair axes and used einsum with w_v's weight row",
    ),
    BlindCase(
        CHECK,
        "one_query_at_a_time",
        OneQueryAtATime,
        "correct",
        "a loop over the queries, each scored against all keys, stacked; extra dropout=0.0",
    ),
    BlindCase(
        CHECK,
        "hand_masked_softmax",
        HandMaskedSoftmax,
        "correct",
        "my own masked softmax (broadcast_to, masked_fill, torch.where guard) and torch.bmm",
    ),
]
