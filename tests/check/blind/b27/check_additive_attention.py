"""Blind set B27, check_additive_attention (chapter 6): additive attention modules as readers write
them."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, as the reader wrote it in the first cell."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Additive(nn.Module):
    """The three bias-free layers under the chapter's names; the mistakes differ in forward."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AddWithBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.W_q(queries)[:, :, None] + self.W_k(keys)[:, None]))
        weights = _masked_softmax(scores.squeeze(-1), mask)
        return weights @ values, weights


class AddAxesSwapped(_Additive):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(1)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # every query against every key
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSumInsteadOfWv(_Additive):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = features.sum(dim=-1)  # w_v^T h with w_v all ones
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddReLU(_Additive):
    def forward(self, queries, keys, values, mask=None):
        hidden = F.relu(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(hidden).squeeze(-1), mask)
        return weights @ values, weights


class AddSqueezeAll(_Additive):
    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(hidden).squeeze()  # drop the size-1 axis of w_v
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddKeysThroughWq(_Additive):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_q(keys).unsqueeze(1)  # project the keys the same way
        weights = _masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AddScaledLikeDotProduct(_Additive):
    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(hidden).squeeze(-1) / math.sqrt(self.w_v.in_features)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Additive):
    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(hidden).squeeze(-1)  # (B, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))
        return weights @ values, weights


class AddMaskFillMinus1e9(_Additive):
    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(hidden).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights, values), weights


class AddMaskTrueBlocks(_Additive):
    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(hidden).squeeze(-1)
        weights = _masked_softmax(scores, None if mask is None else ~mask)  # True = padding
        return weights @ values, weights


class AddTanhOnEachTerm(_Additive):
    def forward(self, queries, keys, values, mask=None):
        q = torch.tanh(self.W_q(queries)).unsqueeze(2)
        k = torch.tanh(self.W_k(keys)).unsqueeze(1)
        weights = _masked_softmax(self.w_v(q + k).squeeze(-1), mask)
        return weights @ values, weights


class AddReturnsContextOnly(_Additive):
    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(hidden).squeeze(-1), mask)
        return weights @ values


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Additive):
    """w_v applied with einsum on its weight row."""

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries)  # (B, T_q, h)
        k = self.W_k(keys)  # (B, T_k, h)
        hidden = torch.tanh(q[..., :, None, :] + k[..., None, :, :])  # (B, T_q, T_k, h)
        scores = torch.einsum("bqkh,h->bqk", hidden, self.w_v.weight[0])
        weights = _masked_softmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class AddLoopOverQueries(nn.Module):
    """One query at a time; an optional dropout on the weights, 0 by default."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        if mask is not None:
            mask = mask.expand(queries.shape[0], queries.shape[1], keys.shape[1])
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t]).unsqueeze(1)  # (B, 1, h)
            s = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k)
            rows.append(_masked_softmax(s, None if mask is None else mask[:, t]))
        weights = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        return torch.bmm(self.dropout(weights), values), weights


class AddExpandCat(_Additive):
    """Queries and keys expanded to (B, T_q, T_k, h) explicitly; where-based masking."""

    def forward(self, queries, keys, values, mask=None):
        B, T_q, _ = queries.shape
        T_k = keys.shape[1]
        q = self.W_q(queries).unsqueeze(2).expand(B, T_q, T_k, -1)
        k = self.W_k(keys).unsqueeze(1).expand(B, T_q, T_k, -1)
        scores = self.w_v((q + k).tanh()).squeeze(3)
        if mask is None:
            weights = scores.softmax(dim=2)
        else:
            mask = mask.expand_as(scores)
            visible = mask.any(dim=2, keepdim=True)
            filled = torch.where(mask, scores, torch.full_like(scores, -torch.inf))
            filled = torch.where(visible, filled, torch.zeros_like(filled))
            weights = torch.where(visible, filled.softmax(dim=2), torch.zeros_like(filled))
        return weights.matmul(values), weights


CASES = [
    BlindCase(
        CHECK,
        "linear_layers_with_bias",
        AddWithBiases,
        "mistake",
        "I kept nn.Linear's default bias=True on W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_axes_swapped",
        AddAxesSwapped,
        "mistake",
        "I unsqueezed the queries at 1 and the keys at 2, so the score grid is (B, T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_w_v",
        AddSumInsteadOfWv,
        "mistake",
        "I summed the tanh features over the hidden axis instead of applying w_v.",
    ),
    BlindCase(
        CHECK,
        "relu_instead_of_tanh",
        AddReLU,
        "mistake",
        "I used ReLU instead of tanh on W_q q + W_k k.",
    ),
    BlindCase(
        CHECK,
        "squeeze_without_dim",
        AddSqueezeAll,
        "mistake",
        "I removed w_v's size-1 axis with .squeeze() and no dim, which also drops a batch of 1 "
        "or a single query.",
    ),
    BlindCase(
        CHECK,
        "keys_through_W_q",
        AddKeysThroughWq,
        "mistake",
        "I projected the keys with W_q too (a copy-paste slip), leaving W_k unused.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_hidden",
        AddScaledLikeDotProduct,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as in scaled dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries, instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "mask_fill_minus_1e9",
        AddMaskFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key attends to padding.",
    ),
    BlindCase(
        CHECK,
        "mask_true_means_padding",
        AddMaskTrueBlocks,
        "mistake",
        "I read the mask as True = padding, as nn.MultiheadAttention does.",
    ),
    BlindCase(
        CHECK,
        "tanh_on_each_term",
        AddTanhOnEachTerm,
        "mistake",
        "I applied tanh to W_q q and W_k k separately and added afterwards.",
    ),
    BlindCase(
        CHECK,
        "returns_context_only",
        AddReturnsContextOnly,
        "mistake",
        "My forward returns only the weighted values, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "einsum_w_v_row",
        AddEinsum,
        "correct",
        "einsum with w_v's weight row for the scores and with the values for the output.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries_with_dropout",
        AddLoopOverQueries,
        "correct",
        "One query at a time, weights stacked; an extra dropout argument, 0 by default.",
    ),
    BlindCase(
        CHECK,
        "expand_and_where",
        AddExpandCat,
        "correct",
        "Queries and keys expanded to (B, T_q, T_k, h); masking with torch.where.",
    ),
]
