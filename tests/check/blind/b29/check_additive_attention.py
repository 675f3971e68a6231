"""Blind set B29, check_additive_attention (chapter 6): score w_v^T tanh(W_q q + W_k k)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax over the keys, for the mistakes that lie elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Layers(nn.Module):
    """The three bias-free layers under the book's names."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        """W_q q + W_k k for every pair: ``(B, T_q, T_k, hidden)``."""
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        scores = self.w_v(self.features(queries, keys)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        scores = torch.tanh(self.w_v(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddRelu(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)  # a small MLP
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddLayersWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(hidden).squeeze(-1), mask)
        return weights @ values, weights


class AddAxesSwapped(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        q = self.W_q(queries).unsqueeze(-3)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(-2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        scores = scores.transpose(-2, -1)  # back to (B, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-2))
        return weights @ values, weights


class AddMaskIgnored(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)  # the mask is for later chapters
        return weights @ values, weights


class AddMaskInverted(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, None if mask is None else mask.logical_not())
        return weights @ values, weights


class AddSqueezeAll(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze()  # drop the 1
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSumOfKeys(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ keys, weights


class AddWvParameter(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Parameter(torch.randn(hidden_dim) / math.sqrt(hidden_dim))  # a vector

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _masked_softmax(hidden @ self.w_v, mask)
        return weights @ values, weights


class AddScaledScores(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        hidden_dim = self.w_v.in_features
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores / math.sqrt(hidden_dim), mask)  # keep them small
        return weights @ values, weights


class AddOutputOnly(_Layers):
    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        return _masked_softmax(scores, mask) @ values


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Layers):
    """w_v as a vector in an einsum; the mask with torch.where."""

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        q = self.W_q(queries)[..., :, None, :]  # (B, T_q, 1, h)
        k = self.W_k(keys)[..., None, :, :]  # (B, 1, T_k, h)
        scores = torch.einsum("...qkh,h->...qk", torch.tanh(q + k), self.w_v.weight[0])
        if mask is not None:
            mask = mask.expand_as(scores)
            seen = mask.any(-1, keepdim=True)
            scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
            scores = torch.where(seen, scores, torch.zeros_like(scores))
            weights = torch.where(seen, scores.softmax(-1), torch.zeros_like(scores))
        else:
            weights = scores.softmax(-1)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddConcatenated(_Layers):
    """Bahdanau's form: one matrix [W_q W_k] on the concatenation [q; k] of every pair."""

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        B, T_q, _ = queries.shape
        T_k = keys.shape[1]
        pairs = torch.cat(
            [
                queries.unsqueeze(2).expand(B, T_q, T_k, queries.shape[-1]),
                keys.unsqueeze(1).expand(B, T_q, T_k, keys.shape[-1]),
            ],
            dim=-1,
        )  # (B, T_q, T_k, d_q + d_k)
        W = torch.cat([self.W_q.weight, self.W_k.weight], dim=1)  # (h, d_q + d_k)
        scores = F.linear(torch.tanh(F.linear(pairs, W)), self.w_v.weight).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return torch.bmm(weights, values), weights


class AddLoopOverQueries(_Layers):
    """One query at a time, with optional dropout and projected keys (defaults: none)."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        queries: Tensor,
        keys: Tensor,
        values: Tensor,
        mask: Tensor | None = None,
        projected_keys: Tensor | None = None,
    ):
        k = self.W_k(keys) if projected_keys is None else projected_keys  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t]).unsqueeze(1)  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        weights = _masked_softmax(scores, mask)
        return self.dropout(weights) @ values, weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfterWv,
        "mistake",
        "I applied tanh to the score after w_v instead of to the hidden vector before it.",
    ),
    BlindCase(
        CHECK,
        "relu_hidden",
        AddRelu,
        "mistake",
        "I used ReLU in the hidden layer, as in an ordinary MLP, instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "layers_with_bias",
        AddLayersWithBias,
        "mistake",
        "I forgot bias=False, so all three linear layers add a bias.",
    ),
    BlindCase(
        CHECK,
        "broadcast_axes_swapped",
        AddAxesSwapped,
        "mistake",
        "I gave the queries axis -3 and the keys axis -2, got (B, T_k, T_q) scores, transposed "
        "them back and then took the softmax with dim=-2.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        AddMaskIgnored,
        "mistake",
        "I accepted the mask argument but never used it.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        AddMaskInverted,
        "mistake",
        "I passed mask.logical_not() to my softmax, thinking True marks the padding.",
    ),
    BlindCase(
        CHECK,
        "squeeze_every_axis",
        AddSqueezeAll,
        "mistake",
        "I removed w_v's output axis with .squeeze() without dim, which also drops a batch or "
        "query axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "weighted_sum_of_keys",
        AddSumOfKeys,
        "mistake",
        "I took the weighted sum of the keys instead of the values.",
    ),
    BlindCase(
        CHECK,
        "w_v_as_parameter_vector",
        AddWvParameter,
        "mistake",
        "The formula writes w_v as a vector, so I made it an nn.Parameter of shape (hidden,), "
        "not a linear layer.",
    ),
    BlindCase(
        CHECK,
        "scaled_like_dot_product",
        AddScaledScores,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as in scaled dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "returns_only_output",
        AddOutputOnly,
        "mistake",
        "My forward returns only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "einsum_vector_w_v",
        AddEinsum,
        "correct",
        "einsum with w_v.weight[0] as a vector, torch.where for the mask and the empty rows.",
    ),
    BlindCase(
        CHECK,
        "concatenated_pairs",
        AddConcatenated,
        "correct",
        "Bahdanau's form: every (query, key) pair concatenated and multiplied by [W_q W_k]; "
        "bmm for the output.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "One query at a time in a loop; optional dropout and projected_keys with defaults.",
    ),
]
