"""Blind set B13, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def _features(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (.., Tq, Tk, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(self._features(queries, keys)).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = torch.tanh(self.w_v(self._features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddWithBias(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__(query_dim, key_dim, hidden_dim)
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias

    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.tanh(self._features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddBroadcastSwapped(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        feats = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (.., Tk, Tq, h)
        scores = self.w_v(torch.tanh(feats)).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.tanh(self._features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=-2))
        return weights @ values, weights


class AddMaskInverted(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.tanh(self._features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, None if mask is None else ~mask)
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.tanh(self._features(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)  # TODO: mask
        return weights @ values, weights


class AddRelu(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.relu(self._features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddNoSqueeze(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.tanh(self._features(queries, keys)))  # (..., Tq, Tk, 1)
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-1), float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1)).squeeze(-1)
        return weights @ values, weights


class AddMixesKeys(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.tanh(self._features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ keys, weights  # the context is a mix of the keys


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.tanh(self._features(queries, keys))).squeeze(-1)
        scores = scores / math.sqrt(self.W_q.out_features)  # scaled like dot products
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddFillMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        scores = self.w_v(torch.tanh(self._features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = scores.softmax(-1)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self._features(queries, keys))
        scores = torch.einsum("...qkh,h->...qk", feats, self.w_v.weight[0])
        weights = _msoftmax(scores, mask)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddQueryLoop(_Base):
    def forward(self, queries, keys, values, mask=None) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys)  # (..., Tk, h)
        rows = []
        for t in range(queries.shape[-2]):
            q = self.W_q(queries[..., t : t + 1, :])  # (..., 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (..., Tk)
        scores = torch.stack(rows, dim=-2)  # (..., Tq, Tk)
        weights = _msoftmax(scores, mask)
        return torch.matmul(weights, values), weights


class AddWithExtras(nn.Module):
    """Dropout (default 0), a project_keys helper and an optional projected_keys argument."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.drop = nn.Dropout(dropout)

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.W_k(keys)

    def forward(self, queries, keys, values, mask=None, projected_keys=None) -> tuple:
        pk = self.project_keys(keys) if projected_keys is None else projected_keys
        scores = self.w_v(torch.tanh(self.W_q(queries)[..., :, None, :] + pk[..., None, :, :]))
        scores = scores[..., 0]
        if mask is not None:
            mask = mask.expand_as(scores)
            scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
            empty = ~mask.any(-1, keepdim=True)
            scores = torch.where(empty, torch.zeros_like(scores), scores)
            weights = torch.where(empty, torch.zeros_like(scores), scores.softmax(-1))
        else:
            weights = scores.softmax(-1)
        return self.drop(weights) @ values, weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I applied the tanh after w_v instead of before.",
    ),
    BlindCase(CHECK, "W_q_with_bias", AddWithBias, "mistake", "I forgot bias=False on W_q."),
    BlindCase(
        CHECK,
        "broadcast_swapped",
        AddBroadcastSwapped,
        "mistake",
        "I unsqueezed the queries at -3 and the keys at -2, so the scores are (T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2.",
    ),
    BlindCase(
        CHECK, "mask_inverted", AddMaskInverted, "mistake", "I read the mask as True = padding."
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        AddMaskIgnored,
        "mistake",
        "I took the plain softmax and never used the mask.",
    ),
    BlindCase(CHECK, "relu", AddRelu, "mistake", "I used ReLU instead of tanh."),
    BlindCase(
        CHECK,
        "softmax_over_size_1_axis",
        AddNoSqueeze,
        "mistake",
        "I took the softmax before squeezing w_v's output, over its axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "mixes_keys",
        AddMixesKeys,
        "mistake",
        "I multiplied the weights by the keys instead of the values.",
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
        AddFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no key spreads over padding.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        AddEinsum,
        "correct",
        "einsum with w_v's weight vector and for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddQueryLoop,
        "correct",
        "One query at a time in a Python loop, the scores stacked.",
    ),
    BlindCase(
        CHECK,
        "extras_and_where",
        AddWithExtras,
        "correct",
        "dropout (default 0), project_keys, projected_keys, and torch.where for the mask.",
    ),
]
