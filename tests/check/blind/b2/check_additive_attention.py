"""Blind cases for check_additive_attention (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_additive_attention"


class _Base(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def _sum(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, T_q, T_k, h)


# ---- mistakes -------------------------------------------------------------------------------


class NoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        weights = masked_softmax(self.w_v(self._sum(queries, keys)).squeeze(-1), mask)
        return weights @ values, weights


class TanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        weights = masked_softmax(torch.tanh(self.w_v(self._sum(queries, keys))).squeeze(-1), mask)
        return weights @ values, weights


class SoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._sum(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-2).nan_to_num(0.0)
        return weights @ values, weights


class MaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        weights = torch.softmax(self.w_v(torch.tanh(self._sum(queries, keys))).squeeze(-1), dim=-1)
        return weights @ values, weights


class MaskInverted(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._sum(queries, keys))).squeeze(-1)
        weights = masked_softmax(scores, None if mask is None else ~mask)
        return weights @ values, weights


class FillMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._sum(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class QueryProjectionWithBias(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__(query_dim, key_dim, hidden_dim)
        self.W_q = nn.Linear(query_dim, hidden_dim)  # left the default bias=True here

    def forward(self, queries, keys, values, mask=None):
        weights = masked_softmax(self.w_v(torch.tanh(self._sum(queries, keys))).squeeze(-1), mask)
        return weights @ values, weights


class ScaledLikeDotProduct(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._sum(queries, keys))).squeeze(-1)
        weights = masked_softmax(scores / math.sqrt(self.W_q.out_features), mask)
        return weights @ values, weights


class WrongBroadcast(_Base):
    def forward(self, queries, keys, values, mask=None):
        # added W_q q and W_k k without the extra axes: query i meets key i only, then broadcast
        s = self.w_v(torch.tanh(self.W_q(queries) + self.W_k(keys)))  # needs T_q == T_k
        weights = masked_softmax(s.transpose(-2, -1).expand(-1, queries.shape[1], -1), mask)
        return weights @ values, weights


# ---- reader's slip ------------------------------------------------------------------------------


class OnlyOutput(_Base):
    def forward(self, queries, keys, values, mask=None):
        weights = masked_softmax(self.w_v(torch.tanh(self._sum(queries, keys))).squeeze(-1), mask)
        return weights @ values  # forgot to return the weights


# ---- correct variants ---------------------------------------------------------------------------


class EinsumScores(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries)[:, :, None, :]
        k = self.W_k(keys)[:, None, :, :]
        scores = torch.einsum("bqkh,h->bqk", torch.tanh(q + k), self.w_v.weight[0])
        weights = masked_softmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class LoopOverQueriesOwnSoftmax(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for i in range(queries.shape[1]):
            q = self.W_q(queries[:, i : i + 1])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        if mask is not None:
            mask = torch.broadcast_to(mask, scores.shape)
            empty = ~mask.any(-1, keepdim=True)
            scores = torch.where(mask | empty, scores, float("-inf"))
            weights = torch.where(empty, 0.0, scores.softmax(-1))
        else:
            weights = scores.softmax(-1)
        return self.dropout(weights) @ values, weights


class FunctionalProjections(_Base):
    def forward(self, queries, keys, values, mask=None):
        import torch.nn.functional as F

        q = F.linear(queries, self.W_q.weight).unsqueeze(2)
        k = F.linear(keys, self.W_k.weight).unsqueeze(1)
        scores = (torch.tanh(q + k) @ self.w_v.weight.T)[..., 0]
        weights = masked_softmax(scores, mask)
        return torch.matmul(weights, values), weights


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        NoTanh,
        "mistake",
        "I applied w_v directly to W_q q + W_k k without the tanh",
    ),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        TanhAfterWv,
        "mistake",
        "I put the tanh after w_v instead of before it",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim -2, the queries",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        MaskIgnored,
        "mistake",
        "I took a plain softmax and never used the mask",
    ),
    BlindCase(
        CHECK, "mask_inverted", MaskInverted, "mistake", "I passed ~mask, reading True as blocked"
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        FillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9 before a plain softmax",
    ),
    BlindCase(
        CHECK,
        "query_projection_with_bias",
        QueryProjectionWithBias,
        "mistake",
        "I left W_q with its default bias",
    ),
    BlindCase(
        CHECK,
        "scaled_like_dot_product",
        ScaledLikeDotProduct,
        "mistake",
        "I divided the scores by sqrt(hidden_dim) as in dot-product attention",
    ),
    BlindCase(
        CHECK,
        "wrong_broadcast",
        WrongBroadcast,
        "mistake",
        "I added W_q q and W_k k without unsqueezing, so query i only meets key i",
    ),
    BlindCase(
        CHECK,
        "only_output",
        OnlyOutput,
        "mistake",
        "my forward returns only the output and not the pair (out, weights)",
    ),
    BlindCase(
        CHECK,
        "einsum_scores",
        EinsumScores,
        "correct",
        "I indexed new axes with None and reduced with w_v's weight vector in an einsum",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries_own_softmax",
        LoopOverQueriesOwnSoftmax,
        "correct",
        "I scored one query at a time, wrote my own masked softmax with torch.where, and added a dropout argument",
    ),
    BlindCase(
        CHECK,
        "functional_projections",
        FunctionalProjections,
        "correct",
        "I applied the three weight matrices with F.linear and matmul",
    ),
]
