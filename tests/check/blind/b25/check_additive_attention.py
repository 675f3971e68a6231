"""Blind set B25, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Layers(nn.Module):
    """The three bias-free layers under the book's names; the mistakes change forward."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def scores(self, queries: Tensor, keys: Tensor) -> Tensor:
        q = self.W_q(queries).unsqueeze(-2)  # (B, T_q, 1, h)
        k = self.W_k(keys).unsqueeze(-3)  # (B, 1, T_k, h)
        return self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_q, T_k)


# ---------------------------------------------------------------- mistakes


class AddSigmoid(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        weights = _masked_softmax(self.w_v(torch.sigmoid(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AddTanhOnEachSide(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = torch.tanh(self.W_q(queries)).unsqueeze(-2)
        k = torch.tanh(self.W_k(keys)).unsqueeze(-3)
        weights = _masked_softmax(self.w_v(q + k).squeeze(-1), mask)  # tanh(a) + tanh(b)
        return weights @ values, weights


class AddBroadcastTransposed(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(1)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        flipped = None if mask is None else mask.transpose(-2, -1)
        weights = _masked_softmax(scores, flipped).transpose(1, 2)  # back to (B, T_q, T_k)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.scores(queries, keys)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # (B, T_q, T_k)
        return weights @ values, weights


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # the default Linear
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        weights = _masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AddScaledLikeDotProduct(_Layers):
    def forward(self, queries, keys, values, mask=None):
        hidden = self.w_v.in_features
        weights = _masked_softmax(self.scores(queries, keys) / math.sqrt(hidden), mask)
        return weights @ values, weights


class AddProjectionsSwapped(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(key_dim, hidden_dim, bias=False)  # mixed up which is which
        self.W_k = nn.Linear(query_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_k(queries).unsqueeze(-2)
        k = self.W_q(keys).unsqueeze(-3)
        weights = _masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AddSqueezeAll(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze()  # drop the size-1 axis of w_v
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddMinusBillion(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.scores(queries, keys)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddTrueBlocks(_Layers):
    def forward(self, queries, keys, values, mask=None):
        weights = _masked_softmax(self.scores(queries, keys), None if mask is None else ~mask)
        return weights @ values, weights


class AddWeightsTimesKeys(_Layers):
    def forward(self, queries, keys, values, mask=None):
        weights = _masked_softmax(self.scores(queries, keys), mask)
        return weights @ keys, weights  # a mix of the keys


class AddMaskIgnored(_Layers):
    def forward(self, queries, keys, values, mask=None):
        weights = torch.softmax(self.scores(queries, keys), dim=-1)
        return weights @ values, weights


class AddReluInstead(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        weights = _masked_softmax(self.w_v(torch.relu(q + k)).squeeze(-1), mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        features = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, T_q, T_k, h)
        scores = torch.einsum("bqkh,h->bqk", features, self.w_v.weight[0])
        if mask is not None:
            low = torch.finfo(scores.dtype).min
            scores = torch.where(mask, scores, torch.full_like(scores, low))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = torch.where(mask, weights, torch.zeros_like(weights))
        return torch.einsum("bqk,bkv->bqv", weights, values), weights


class AddLoopOverQueries(_Layers):
    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        k = self.W_k(keys) if projected_keys is None else projected_keys  # (B, T_k, h)
        outs, rows = [], []
        for i in range(queries.shape[1]):
            q = self.W_q(queries[:, i : i + 1])  # (B, 1, h)
            s = self.w_v(torch.tanh(q + k)).transpose(1, 2)  # (B, 1, T_k)
            m = None
            if mask is not None:
                m = mask[..., i : i + 1, :] if mask.dim() > 1 and mask.shape[-2] > 1 else mask
            w = _masked_softmax(s, m)
            rows.append(w)
            outs.append(torch.bmm(w, values))
        return torch.cat(outs, dim=1), torch.cat(rows, dim=1)


class AddExpandCat(_Layers):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        B, Tq, Tk = queries.shape[0], queries.shape[1], keys.shape[1]
        q = self.W_q(queries).unsqueeze(2).expand(B, Tq, Tk, -1)
        k = self.W_k(keys).unsqueeze(1).expand(B, Tq, Tk, -1)
        scores = self.w_v(torch.tanh(q + k))[..., 0]
        if mask is not None:
            mask = mask.expand(B, Tq, Tk)
            empty = ~mask.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return self.dropout(weights) @ values, weights


CASES = [
    BlindCase(
        CHECK,
        "sigmoid_not_tanh",
        AddSigmoid,
        "mistake",
        "I squashed W_q q + W_k k with a sigmoid instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_each_side",
        AddTanhOnEachSide,
        "mistake",
        "I applied tanh to W_q q and to W_k k separately and added afterwards.",
    ),
    BlindCase(
        CHECK,
        "broadcast_transposed",
        AddBroadcastTransposed,
        "mistake",
        "I unsqueezed the queries at 1 and the keys at 2, got (B, T_k, T_q) scores, took the "
        "softmax over their last axis and transposed the weights afterwards.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries.",
    ),
    BlindCase(
        CHECK,
        "layers_with_bias",
        AddWithBias,
        "mistake",
        "I left the three nn.Linear layers with their default bias.",
    ),
    BlindCase(
        CHECK,
        "scaled_like_dot_product",
        AddScaledLikeDotProduct,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as for dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "projections_swapped",
        AddProjectionsSwapped,
        "mistake",
        "I applied W_k to the queries and W_q to the keys.",
    ),
    BlindCase(
        CHECK,
        "squeeze_without_axis",
        AddSqueezeAll,
        "mistake",
        "I removed w_v's size-1 axis with squeeze() and no axis, which also drops T_q = 1 or "
        "B = 1.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddMinusBillion,
        "mistake",
        "I filled the masked scores with -1e9, so a query with no visible key spreads its "
        "weight over the masked ones.",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        AddTrueBlocks,
        "mistake",
        "I read the mask as True = blocked and inverted it.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        AddWeightsTimesKeys,
        "mistake",
        "I returned the weighted sum of the keys instead of the values.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        AddMaskIgnored,
        "mistake",
        "I accepted mask but never used it.",
    ),
    BlindCase(
        CHECK,
        "relu_not_tanh",
        AddReluInstead,
        "mistake",
        "I used ReLU as the nonlinearity, as in a feed-forward layer.",
    ),
    BlindCase(
        CHECK,
        "einsum_finfo",
        AddEinsum,
        "correct",
        "einsum with the layers' weights for every product; the dtype's lowest number as the "
        "fill and torch.where to zero masked weights.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "A loop over the queries with torch.bmm; an optional projected_keys argument.",
    ),
    BlindCase(
        CHECK,
        "expand_with_dropout_arg",
        AddExpandCat,
        "correct",
        "Queries and keys expanded to (B, T_q, T_k, h) before adding; a dropout argument that "
        "defaults to 0.",
    ),
]
