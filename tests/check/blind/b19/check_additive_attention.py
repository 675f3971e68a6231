"""Blind set B19, check_additive_attention (chapter 6): Bahdanau's additive scoring module."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The book's three layers; the mistakes below differ only in ``forward``."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        """``W_q q + W_k k`` for every pair: ``(B, T_q, T_k, hidden)``."""
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.features(queries, keys)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddReLU(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSoftmaxQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 1 after the batch
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddMaskInverted(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, None if mask is None else ~mask)
        return weights @ values, weights


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(h).squeeze(-1), mask)
        return weights @ values, weights


class AddFill1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)  # big negative, no NaN
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddWeightsFirst(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights, weights @ values


class AddSumsKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ self.W_k(keys), weights  # the projected keys as the values


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        scores = scores / math.sqrt(self.W_q.out_features)  # scaled, as for dot products
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    """The w_v product by einsum with its weight, masking with torch.where."""

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.features(queries, keys))
        scores = torch.einsum("bqkh,h->bqk", feats, self.w_v.weight[0])
        if mask is not None:
            scores = torch.where(mask, scores, float("-inf"))
            empty = torch.isneginf(scores).all(-1, keepdim=True)
            weights = torch.where(empty, 0.0, scores.masked_fill(empty, 0.0).softmax(-1))
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class AddLoopOverQueries(_Base):
    """One query at a time, stacked; optional projected_keys and dropout arguments."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        k = self.W_k(keys) if projected_keys is None else projected_keys  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t]).unsqueeze(1)  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        if mask is not None:
            mask = mask.expand_as(scores)
        weights = _masked_softmax(scores, mask)
        return self.dropout(weights) @ values, weights


class AddMinFill(_Base):
    """Fill with the dtype's lowest value and zero the masked weights after the softmax."""

    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.features(queries, keys).tanh()).squeeze(-1)
        if mask is not None:
            mask = mask.expand_as(scores)
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = scores.softmax(-1)
        if mask is not None:
            weights = weights * mask
        return torch.matmul(weights, values), weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I applied the tanh after w_v instead of before.",
    ),
    BlindCase(CHECK, "relu", AddReLU, "mistake", "I used a ReLU instead of the tanh."),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxQueries,
        "mistake",
        "I took the softmax over dim=1, which is the queries in (B, T_q, T_k).",
    ),
    BlindCase(CHECK, "mask_ignored", AddMaskIgnored, "mistake", "I never applied the mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        AddMaskInverted,
        "mistake",
        "I passed ~mask, thinking True means padding.",
    ),
    BlindCase(
        CHECK,
        "layers_with_bias",
        AddWithBias,
        "mistake",
        "I kept nn.Linear's default bias on the three layers.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFill1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a query with no visible key spreads its "
        "weight over the padding.",
    ),
    BlindCase(CHECK, "weights_first", AddWeightsFirst, "mistake", "I return (weights, out)."),
    BlindCase(
        CHECK,
        "sums_projected_keys",
        AddSumsKeys,
        "mistake",
        "I took the weighted sum of the projected keys instead of the values.",
    ),
    BlindCase(
        CHECK,
        "scaled_scores",
        AddScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as in dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        AddEinsum,
        "correct",
        "w_v applied by einsum with its weight vector; masking with torch.where.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "A loop over the queries, scores stacked; extra dropout and projected_keys arguments.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_fill",
        AddMinFill,
        "correct",
        "finfo.min fill and the weights multiplied by the mask after the softmax.",
    ),
]
