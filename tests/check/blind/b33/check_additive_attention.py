"""Blind set B33, check_additive_attention (chapter 6): Bahdanau's additive attention module as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """The reader's own masked softmax from the first cell (a right one)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The three layers as the docstring asks; each mistake overrides what it gets wrong."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        """W_q q + W_k k for every pair: (B, T_q, T_k, hidden)."""
        return self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)


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


class AddReluFeatures(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)  # an MLP score
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddProjectionsSwapped(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_k(queries).unsqueeze(2)  # one projection per input...
        k = self.W_q(keys).unsqueeze(1)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddWithBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # default layers, bias included
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        scores = self.w_v(torch.tanh(feats)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddUnsqueezesMask(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            mask = mask.unsqueeze(1)  # (B, T_k) padding mask -> (B, 1, T_k) for the queries
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=1))  # (B, T_q, T_k): dim 1
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddMaskInverted(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            mask = ~mask  # True marks the padding
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddFillMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, values), weights


class AddReturnsOutOnly(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        return _masked_softmax(scores, mask) @ values


class AddMultiplies(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(2) * self.W_k(keys).unsqueeze(1)  # combine q and k
        scores = self.w_v(torch.tanh(feats)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddWeightsDotKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ keys, weights  # the keys are the encoder states


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    """w_v applied with einsum on its weight row; project once, broadcast with indexing."""

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.W_q(queries)[..., :, None, :]  # (B, T_q, 1, h)
        k = self.W_k(keys)[..., None, :, :]  # (B, 1, T_k, h)
        scores = torch.einsum("...qkh,h->...qk", torch.tanh(q + k), self.w_v.weight[0])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddWithDropoutAndCache(nn.Module):
    """Extra dropout and projected_keys arguments with defaults, as the book's module has."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        if projected_keys is None:
            projected_keys = self.W_k(keys)
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + projected_keys.unsqueeze(-3))
        scores = self.w_v(feats).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return self.dropout(weights) @ values, weights


class AddLoopOverQueries(_Base):
    """One query at a time in a Python loop, then stacked."""

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t]).unsqueeze(1)  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        if mask is not None:
            mask = mask.expand_as(scores)
            scores = scores.masked_fill(~mask, float("-inf"))
            has_key = mask.any(-1, keepdim=True)
            scores = torch.where(has_key, scores, torch.zeros_like(scores))
            weights = torch.where(has_key, scores.softmax(-1), torch.zeros_like(scores))
        else:
            weights = scores.softmax(-1)
        return torch.bmm(weights, values), weights


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        AddNoTanh,
        "mistake",
        "I forgot the tanh: the score is w_v(W_q q + W_k k).",
    ),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I put the tanh after w_v, around the score, instead of before it.",
    ),
    BlindCase(
        CHECK,
        "relu_features",
        AddReluFeatures,
        "mistake",
        "I used ReLU in the hidden layer of the score, like an ordinary MLP.",
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
        "with_biases",
        AddWithBiases,
        "mistake",
        "I left the three nn.Linear layers with their default biases.",
    ),
    BlindCase(
        CHECK,
        "unsqueezes_mask",
        AddUnsqueezesMask,
        "mistake",
        "I added a query axis to the mask with unsqueeze(1), as if it were a (B, T_k) padding "
        "mask.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1 of the (B, T_q, T_k) scores.",
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
        "I inverted the mask, thinking True marks the padding.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFillMinus1e9,
        "mistake",
        "I filled the masked scores with -1e9 and used F.softmax.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        AddReturnsOutOnly,
        "mistake",
        "I return only the output, not the weights.",
    ),
    BlindCase(
        CHECK,
        "multiplies",
        AddMultiplies,
        "mistake",
        "I multiplied the projected query and key instead of adding them.",
    ),
    BlindCase(
        CHECK,
        "weights_dot_keys",
        AddWeightsDotKeys,
        "mistake",
        "I took the weighted sum of the keys instead of the values.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        AddEinsum,
        "correct",
        "Broadcast by indexing with None, einsum with w_v's weight row, -inf and empty rows "
        "zeroed in place of a helper.",
    ),
    BlindCase(
        CHECK,
        "dropout_and_cache",
        AddWithDropoutAndCache,
        "correct",
        "Extra dropout and projected_keys arguments with defaults, like the book's module.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "A Python loop over the queries, each scored against all keys, then stacked; torch.where "
        "for the mask.",
    ),
]
