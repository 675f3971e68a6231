"""Blind set B18, check_additive_attention (chapter 6): Bahdanau's additive attention module as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
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
    """The three bias-free layers of the skeleton, shared by the mistakes in ``forward``."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)  # (B, T_q, 1, h)
        k = self.W_k(keys).unsqueeze(1)  # (B, 1, T_k, h)
        scores = self.w_v(q + k).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        scores = torch.tanh(self.w_v(q + k)).squeeze(-1)  # squash the score itself
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddIgnoresMask(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = F.softmax(self.w_v(features).squeeze(-1), dim=-1)  # mask: later
        return torch.bmm(weights, values), weights


class AddMaskTrueBlocks(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        weights = _masked_softmax(scores, None if mask is None else ~mask)  # True = padding
        return weights @ values, weights


class AddSoftmaxOverQueries(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (B, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1).nan_to_num(0.0)
        return weights @ values, weights


class AddUnsqueezeSwapped(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(1)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddFillMinus1e9(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddLayersWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values, weights


class AddWeightsTimesMask(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = torch.softmax(self.w_v(features).squeeze(-1), dim=-1)
        if mask is not None:
            weights = weights * mask  # padding gets no weight
        return weights @ values, weights


class AddReturnsWeightsFirst(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(features).squeeze(-1), mask)
        return weights, weights @ values


class AddValuesProjected(_Layers):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + k.unsqueeze(1))
        weights = _masked_softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ self.W_k(values), weights  # the values projected like the keys


# ---------------------------------------------------------------- correct variants


class AddEinsum(nn.Module):
    """einsum for w_v, and an optional dropout argument that defaults to 0."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries)[..., :, None, :] + self.W_k(keys)[..., None, :, :])
        scores = torch.einsum("bqkh,h->bqk", features, self.w_v.weight[0])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqk,bkd->bqd", self.dropout(weights), values), weights


class AddProjectKeysHelper(_Layers):
    """A project_keys method and a projected_keys argument, as the decoder of chapter 7 uses."""

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.W_k(keys)

    def score(self, queries: Tensor, projected_keys: Tensor) -> Tensor:
        return self.w_v(torch.tanh(self.W_q(queries).unsqueeze(-2) + projected_keys.unsqueeze(-3)))

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        if projected_keys is None:
            projected_keys = self.project_keys(keys)
        scores = self.score(queries, projected_keys).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return torch.matmul(weights, values), weights


class AddLoopOverQueries(_Layers):
    """One query at a time, the rows stacked at the end."""

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t])  # (B, h)
            rows.append(self.w_v(torch.tanh(q[:, None, :] + k))[..., 0])  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        if mask is not None:
            mask = mask.expand_as(scores)
            scores = scores.masked_fill(~mask, float("-inf"))
            none = ~mask.any(dim=-1, keepdim=True)
            weights = torch.softmax(scores.masked_fill(none, 0.0), dim=-1) * (~none)
        else:
            weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        AddNoTanh,
        "mistake",
        "I wrote w_v(W_q q + W_k k) and forgot the tanh.",
    ),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfterWv,
        "mistake",
        "I applied tanh after w_v, to the score, instead of to W_q q + W_k k.",
    ),
    BlindCase(
        CHECK,
        "ignores_mask",
        AddIgnoresMask,
        "mistake",
        "I took the plain softmax and never used the mask.",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        AddMaskTrueBlocks,
        "mistake",
        "I used the mask as True = padding, the opposite of the book.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, which is the queries' axis of (B, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_swapped",
        AddUnsqueezeSwapped,
        "mistake",
        "I gave the queries the axis at 1 and the keys the axis at 2, so the scores come out "
        "(B, T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key averages the padding.",
    ),
    BlindCase(
        CHECK,
        "projections_with_bias",
        AddLayersWithBias,
        "mistake",
        "I left nn.Linear's default bias on W_q and W_k.",
    ),
    BlindCase(
        CHECK,
        "weights_times_mask",
        AddWeightsTimesMask,
        "mistake",
        "I multiplied the softmax weights by the mask afterwards, without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        AddReturnsWeightsFirst,
        "mistake",
        "I return (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "values_projected_by_W_k",
        AddValuesProjected,
        "mistake",
        "I passed the values through W_k too before the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_dropout_arg",
        AddEinsum,
        "correct",
        "einsum with w_v's weight vector; an extra dropout argument that defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "project_keys_helper",
        AddProjectKeysHelper,
        "correct",
        "Extra project_keys and score methods, and an optional projected_keys argument.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "The scores built one query at a time and stacked.",
    ),
]
