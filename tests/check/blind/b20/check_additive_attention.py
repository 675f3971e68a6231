"""Blind set B20, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """The reader's own (right) masked softmax from the cell before."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        """W_q q + W_k k for every (query, key): (B, T_q, T_k, hidden)."""
        return self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)


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


class AddRelu(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # Linear's default bias
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _msoftmax(self.w_v(h).squeeze(-1), mask)
        return weights @ values, weights


class AddSoftmaxQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))
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
            mask = mask == 0  # positions to hide
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddBroadcastSwapped(_Base):
    def forward(self, queries, keys, values, mask=None):
        h = self.W_q(queries).unsqueeze(1) + self.W_k(keys).unsqueeze(2)  # (B, T_k, T_q, h)
        scores = self.w_v(torch.tanh(h)).squeeze(-1).transpose(1, 2)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights.transpose(1, 2)  # keys as rows for the heat map


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None):
        hidden = self.W_q.out_features
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores / math.sqrt(hidden), mask)  # as in dot-product attention
        return weights @ values, weights


class AddFill1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = scores.softmax(-1)
        return weights @ values, weights


class AddProjectedValues(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ self.W_k(values), weights  # values live where keys live


class AddSharedProjection(_Base):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_q(keys)  # one projection for both sides
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + k.unsqueeze(1))
        weights = _msoftmax(self.w_v(h).squeeze(-1), mask)
        return weights @ values, weights


class AddSigmoid(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.sigmoid(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries)  # (B, T_q, h)
        k = self.W_k(keys)  # (B, T_k, h)
        h = torch.tanh(q[:, :, None, :] + k[:, None, :, :])
        scores = torch.einsum("bqkh,h->bqk", h, self.w_v.weight[0])
        weights = _msoftmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class AddLoopOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        weights = _msoftmax(scores, mask)
        return torch.bmm(weights, values), weights


class AddExpand(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        B, T_q, _ = queries.shape
        T_k = keys.shape[1]
        q = self.W_q(queries).unsqueeze(2).expand(-1, -1, T_k, -1)
        k = self.W_k(keys).unsqueeze(1).expand(-1, T_q, -1, -1)
        scores = self.w_v(torch.tanh(q + k))[..., 0]
        if mask is not None:
            mask = mask.expand(B, T_q, T_k)
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0).softmax(-1).masked_fill(empty, 0)
        else:
            weights = scores.softmax(-1)
        return torch.matmul(self.drop(weights), values), weights


class AddBookSoftmax(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        from transformer_tutorial.attention import masked_softmax

        features = torch.tanh(self.features(queries, keys))
        scores = (features @ self.w_v.weight.T).squeeze(-1)
        weights = masked_softmax(scores, mask)
        return weights @ values, weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I put the tanh after w_v instead of before it.",
    ),
    BlindCase(CHECK, "relu", AddRelu, "mistake", "I used ReLU in place of tanh."),
    BlindCase(
        CHECK,
        "linear_biases",
        AddWithBias,
        "mistake",
        "I kept nn.Linear's default bias on the three layers.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxQueries,
        "mistake",
        "I took the softmax over dim=1.",
    ),
    BlindCase(CHECK, "mask_ignored", AddMaskIgnored, "mistake", "I did not apply the mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        AddMaskInverted,
        "mistake",
        "I turned the mask into mask == 0 before masking.",
    ),
    BlindCase(
        CHECK,
        "weights_keys_by_queries",
        AddBroadcastSwapped,
        "mistake",
        "I broadcast keys against queries and returned the weights as (B, T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "scaled_scores",
        AddScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim) as in dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFill1e9,
        "mistake",
        "I masked with -1e9 and a plain softmax.",
    ),
    BlindCase(
        CHECK,
        "values_projected",
        AddProjectedValues,
        "mistake",
        "I also passed the values through W_k.",
    ),
    BlindCase(
        CHECK,
        "W_q_for_keys",
        AddSharedProjection,
        "mistake",
        "I projected the keys with W_q too.",
    ),
    BlindCase(CHECK, "sigmoid", AddSigmoid, "mistake", "I used a sigmoid instead of tanh."),
    BlindCase(
        CHECK,
        "einsum_w_v_weight",
        AddEinsum,
        "correct",
        "einsum with w_v's weight vector, and einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "One query at a time in a loop, stacked into (B, T_q, T_k), then bmm.",
    ),
    BlindCase(
        CHECK,
        "expanded_with_dropout",
        AddExpand,
        "correct",
        "Both sides expanded to (B, T_q, T_k, h), my own masking, an optional dropout.",
    ),
    BlindCase(
        CHECK,
        "book_masked_softmax",
        AddBookSoftmax,
        "correct",
        "The chapter's masked_softmax and a matmul with w_v.weight.T.",
    ),
]
