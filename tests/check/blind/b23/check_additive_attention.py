"""Blind set B23, check_additive_attention (chapter 6): w_v^T tanh(W_q q + W_k k), by readers."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (the reader's own from the first cell)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Additive(nn.Module):
    """The three bias-free layers; the subclasses write ``forward``."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def pairs(self, queries: Tensor, keys: Tensor) -> Tensor:
        """``W_q q + W_k k`` for every (query, key): ``(B, T_q, T_k, hidden)``."""
        return self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.pairs(queries, keys)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.pairs(queries, keys))).squeeze(-1)  # bounded scores
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddReluFeatures(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(F.relu(self.pairs(queries, keys))).squeeze(-1)  # a hidden layer
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddTanhEachSide(_Additive):
    def forward(self, queries, keys, values, mask=None):
        q = torch.tanh(self.W_q(queries)).unsqueeze(2)
        k = torch.tanh(self.W_k(keys)).unsqueeze(1)
        scores = self.w_v(q + k).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1).nan_to_num(0.0)  # dim 1 of (B, T_q, T_k)
        return weights @ values, weights


class AddSqueezeAfterSoftmax(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys)))  # (B, T_q, T_k, 1)
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-1), float("-inf"))
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0).squeeze(-1)
        return weights @ values, weights


class AddMaskIgnored(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)  # TODO: the mask
        return weights @ values, weights


class AddTrueBlocks(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, None if mask is None else ~mask)  # True = padding
        return weights @ values, weights


class AddFill1e9(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddWithBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values, weights


class AddScaled(_Additive):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.pairs(queries, keys))
        scores = self.w_v(features).squeeze(-1) / math.sqrt(features.shape[-1])  # as in attention
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddPoolsKeys(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ keys, weights


class AddReturnsOutOnly(_Additive):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.pairs(queries, keys))).squeeze(-1)
        return _masked_softmax(scores, mask) @ values


# ---------------------------------------------------------------- correct variants


class AddEinsumWv(_Additive):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = F.linear(queries, self.W_q.weight)  # (B, T_q, h)
        k = F.linear(keys, self.W_k.weight)  # (B, T_k, h)
        features = torch.tanh(q[..., :, None, :] + k[..., None, :, :])  # (B, T_q, T_k, h)
        scores = torch.einsum("...qkh,h->...qk", features, self.w_v.weight[0])
        if mask is not None:
            empty = ~mask.any(-1, keepdim=True)
            scores = torch.where(mask, scores, float("-inf")).masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddQueryLoop(_Additive):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h), once
        columns = []
        for t in range(queries.shape[-2]):
            q = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            columns.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(columns, dim=-2)  # (B, T_q, T_k)
        weights = _masked_softmax(scores, mask)
        return torch.bmm(weights, values), weights


class AddProjectedKeysArg(_Additive):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        if projected_keys is None:
            projected_keys = self.W_k(keys)
        features = (self.W_q(queries)[:, :, None] + projected_keys[:, None]).tanh()
        scores = self.w_v(features)[..., 0]
        weights = _masked_softmax(scores, mask)
        return self.dropout(weights) @ values, weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left the tanh out"),
    BlindCase(
        CHECK, "tanh_after_wv", AddTanhAfterWv, "mistake", "I put the tanh after w_v, on the scores"
    ),
    BlindCase(
        CHECK,
        "relu_features",
        AddReluFeatures,
        "mistake",
        "I used a relu instead of the tanh, like a hidden layer",
    ),
    BlindCase(
        CHECK,
        "tanh_each_side",
        AddTanhEachSide,
        "mistake",
        "I took tanh(W_q q) + tanh(W_k k), the tanh before the sum",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries",
    ),
    BlindCase(
        CHECK,
        "squeeze_after_softmax",
        AddSqueezeAfterSoftmax,
        "mistake",
        "I took the softmax over the last axis of (B, T_q, T_k, 1) before squeezing it",
    ),
    BlindCase(CHECK, "mask_ignored", AddMaskIgnored, "mistake", "I never used the mask"),
    BlindCase(
        CHECK, "true_blocks", AddTrueBlocks, "mistake", "I inverted the mask, True meaning padding"
    ),
    BlindCase(
        CHECK,
        "fill_1e9",
        AddFill1e9,
        "mistake",
        "I filled masked scores with -1e9 and took a plain softmax",
    ),
    BlindCase(
        CHECK,
        "with_biases",
        AddWithBiases,
        "mistake",
        "I left the default bias=True on the three layers",
    ),
    BlindCase(
        CHECK,
        "scaled",
        AddScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim) as in dot-product attention",
    ),
    BlindCase(
        CHECK,
        "pools_keys",
        AddPoolsKeys,
        "mistake",
        "I took the weighted sum of the keys instead of the values",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        AddReturnsOutOnly,
        "mistake",
        "I returned only the output, not (out, weights)",
    ),
    BlindCase(
        CHECK,
        "einsum_wv",
        AddEinsumWv,
        "correct",
        "F.linear for the projections, einsum with w_v's row, torch.where for the mask",
    ),
    BlindCase(
        CHECK,
        "query_loop",
        AddQueryLoop,
        "correct",
        "W_k k once, a loop over the queries for the scores, bmm for the output",
    ),
    BlindCase(
        CHECK,
        "projected_keys_arg",
        AddProjectedKeysArg,
        "correct",
        "optional projected_keys and dropout arguments, like the chapter's module",
    ),
]
