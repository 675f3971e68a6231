"""Blind cases for check_additive_attention (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _softmax(scores, mask):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _Layers(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def pairs(self, queries, keys):
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, T_q, T_k, h)


class TanhAfterWv(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.pairs(queries, keys))).squeeze(-1)
        weights = _softmax(scores, mask)
        return weights @ values, weights


class DefaultBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        q, k = self.W_q(queries).unsqueeze(-2), self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        weights = _softmax(scores, mask)
        return weights @ values, weights


class KeysOnRows(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-3)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(-2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        if mask is not None:
            scores = scores.masked_fill(~mask.transpose(-2, -1), float("-inf"))
        weights = torch.softmax(scores, dim=-1).transpose(-2, -1)  # (B, T_q, T_k)
        return weights @ values, weights


class MaskTrueHides(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        if mask is not None:
            mask = ~mask
        weights = _softmax(scores, mask)
        return weights @ values, weights


class SumInsteadOfWv(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.pairs(queries, keys)).sum(-1)
        weights = _softmax(scores, mask)
        return weights @ values, weights


class MaskNeverUsed(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class SqueezeEverything(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze()
        if mask is not None:
            mask = mask.expand(*queries.shape[:-1], keys.shape[-2]).squeeze()
        weights = _softmax(scores, mask)
        return weights @ values, weights


class EinsumScores(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.pairs(queries, keys))  # (B, T_q, T_k, h)
        scores = torch.einsum("bqkh,h->bqk", features, self.w_v.weight[0])
        weights = _softmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class QueryByQuery(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h), once for every query
        rows = []
        for t in range(queries.shape[-2]):
            q = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=-2)  # (B, T_q, T_k)
        if mask is not None:
            mask = mask.expand_as(scores)
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
        else:
            weights = torch.softmax(scores, dim=-1)
        return self.dropout(weights) @ values, weights


CASES = [
    BlindCase(
        CHECK,
        "tanh_after_wv",
        TanhAfterWv,
        "mistake",
        "I applied w_v first and the tanh to the resulting score",
    ),
    BlindCase(
        CHECK,
        "default_biases",
        DefaultBiases,
        "mistake",
        "I left nn.Linear's default bias on W_q and W_k",
    ),
    BlindCase(
        CHECK,
        "keys_on_rows",
        KeysOnRows,
        "mistake",
        "I broadcast keys on the rows (T_k, T_q), took the softmax on the last axis, then transposed",
    ),
    BlindCase(
        CHECK,
        "mask_true_hides",
        MaskTrueHides,
        "mistake",
        "I inverted the mask, thinking True marks padding",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_wv",
        SumInsteadOfWv,
        "mistake",
        "I summed the tanh features instead of applying w_v (I created w_v but never used it)",
    ),
    BlindCase(
        CHECK,
        "mask_never_used",
        MaskNeverUsed,
        "mistake",
        "I accepted the mask argument but called the plain softmax",
    ),
    BlindCase(
        CHECK,
        "squeeze_everything",
        SqueezeEverything,
        "mistake",
        "I used .squeeze() with no axis after w_v, which drops every size-1 axis",
    ),
    BlindCase(
        CHECK,
        "einsum_scores",
        EinsumScores,
        "correct",
        "I contracted the tanh features with w_v.weight by einsum, einsum for the output too",
    ),
    BlindCase(
        CHECK,
        "query_by_query",
        QueryByQuery,
        "correct",
        "I loop over the queries and stack the rows of scores; an optional dropout (default 0)",
    ),
]
