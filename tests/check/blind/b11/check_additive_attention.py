"""Blind set B11, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    return torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        """W_q q + W_k k for every pair: (..., T_q, T_k, hidden)."""
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.features(queries, keys)).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddReLU(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddWithBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _msoftmax(self.w_v(h).squeeze(-1), mask)
        return weights @ values, weights


class AddMaskPolarity(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = padding
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights, values), weights


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=-2))
        return weights @ values, weights


class AddProjectionsSwapped(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_k(queries).unsqueeze(-2)  # each input through the other's matrix
        k = self.W_q(keys).unsqueeze(-3)
        weights = _msoftmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AddSumNotWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.features(queries, keys)).sum(dim=-1)  # reduce to one number
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddReturnsWeightsFirst(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights, weights @ values


class AddSqueezeAll(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze()  # drop the 1
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        scores = scores / self.W_q.out_features**0.5  # scaled, as for dot products
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddIndexing(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries)[..., :, None, :]  # (B, T_q, 1, h)
        k = self.W_k(keys)[..., None, :, :]  # (B, 1, T_k, h)
        scores = (torch.tanh(q + k) @ self.w_v.weight.T)[..., 0]
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            scores = scores.masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddLoopOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        projected = self.W_k(keys)  # (B, T_k, h), once
        rows = []
        for t in range(queries.shape[-2]):
            q_t = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q_t + projected)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=-2)  # (B, T_q, T_k)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddWithExtras(nn.Module):
    """Dropout (default 0), a project_keys helper and an optional projected_keys argument."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.W_k(keys)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        if projected_keys is None:
            projected_keys = self.project_keys(keys)
        feats = self.W_q(queries).unsqueeze(2) + projected_keys.unsqueeze(1)
        feats = feats.tanh_()  # in place on my own sum
        weights = _msoftmax(self.w_v(feats).squeeze(3), mask)
        return torch.bmm(self.dropout(weights), values), weights


CASES = [
    BlindCase(
        CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh: w_v^T (W_q q + W_k k)."
    ),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfterWv,
        "mistake",
        "I applied the tanh after w_v, to the score, instead of before it.",
    ),
    BlindCase(CHECK, "relu_not_tanh", AddReLU, "mistake", "I used ReLU as the nonlinearity."),
    BlindCase(
        CHECK,
        "layers_with_bias",
        AddWithBiases,
        "mistake",
        "I used nn.Linear's default bias=True for W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        AddMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True, reading it as a padding mask.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        AddMaskIgnored,
        "mistake",
        "I forgot to use the mask argument at all.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key spreads its weight "
        "over the masked keys.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2, the queries.",
    ),
    BlindCase(
        CHECK,
        "W_q_and_W_k_swapped",
        AddProjectionsSwapped,
        "mistake",
        "I put the queries through W_k and the keys through W_q.",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_w_v",
        AddSumNotWv,
        "mistake",
        "I reduced the tanh features to a score by summing them, never using w_v.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        AddReturnsWeightsFirst,
        "mistake",
        "I return (weights, out).",
    ),
    BlindCase(
        CHECK,
        "squeeze_without_dim",
        AddSqueezeAll,
        "mistake",
        "I used .squeeze() with no axis, which also drops a batch or query axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "scaled_like_dot_product",
        AddScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as for dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "indexing_and_einsum",
        AddIndexing,
        "correct",
        "None-indexing for the broadcast, w_v.weight as a matrix, einsum for the output.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "The keys projected once, then one query at a time in a loop, the scores stacked.",
    ),
    BlindCase(
        CHECK,
        "dropout_and_projected_keys",
        AddWithExtras,
        "correct",
        "dropout=0.0, a project_keys helper, an optional projected_keys argument, tanh_ in "
        "place on its own sum, bmm for the output.",
    ),
]
