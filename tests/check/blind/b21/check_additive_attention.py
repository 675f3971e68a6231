"""Blind set B21, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (the reader's own from the first cell)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The three layers under the book's names; subclasses write forward."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, Tq, Tk, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        weights = _msoftmax(self.w_v(self.features(queries, keys)).squeeze(-1), mask)
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


class AddKeysThroughWq(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) + self.W_q(keys).unsqueeze(-3)
        weights = _msoftmax(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return weights @ values, weights


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        weights = _msoftmax(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return weights @ values, weights


class AddBroadcastSwapped(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (B, Tk, Tq, h)
        scores = self.w_v(torch.tanh(feats)).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddMaskInverted(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, None if mask is None else ~mask)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1).nan_to_num(0.0)
        return weights @ values, weights


class AddSumsKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ keys, weights


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        scores = scores / math.sqrt(self.W_q.out_features)  # scaled like dot-product scores
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddReturnsOutOnly(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        return _msoftmax(scores, mask) @ values


class AddFill1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = scores.softmax(-1)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        feats = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, Tq, Tk, h)
        scores = torch.einsum("bqkh,h->bqk", feats, self.w_v.weight[0])
        weights = _msoftmax(scores, mask)
        return torch.einsum("bqk,bkv->bqv", weights, values), weights


class AddLoopOverQueries(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys)  # (B, Tk, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t]).unsqueeze(1)  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, Tk)
        scores = torch.stack(rows, dim=1)  # (B, Tq, Tk)
        weights = _msoftmax(scores, mask)
        return torch.bmm(weights, values), weights


class AddOptions(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(
        self,
        queries: Tensor,
        keys: Tensor,
        values: Tensor,
        mask: Tensor | None = None,
        projected_keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys) if projected_keys is None else projected_keys
        scores = (
            torch.tanh(self.W_q(queries)[..., :, None, :] + k[..., None, :, :]) @ self.w_v.weight.T
        )[..., 0]
        if mask is not None:
            visible = mask.any(-1, keepdim=True)
            scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)
            weights = scores.softmax(-1) * visible
        else:
            weights = scores.softmax(-1)
        return self.drop(weights) @ values, weights


class AddTanhModule(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__(query_dim, key_dim, hidden_dim)
        self.act = nn.Tanh()

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.W_q(queries).unsqueeze(2).expand(-1, -1, keys.shape[1], -1)
        k = self.W_k(keys).unsqueeze(1).expand(-1, queries.shape[1], -1, -1)
        scores = self.w_v(self.act(k + q)).squeeze(3)
        weights = _msoftmax(scores, mask)
        return weights.matmul(values), weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I applied tanh after w_v instead of before it.",
    ),
    BlindCase(CHECK, "relu", AddRelu, "mistake", "I used relu instead of tanh."),
    BlindCase(
        CHECK,
        "keys_through_W_q",
        AddKeysThroughWq,
        "mistake",
        "I projected the keys with W_q too (copy-paste), W_k is unused.",
    ),
    BlindCase(
        CHECK,
        "layers_with_bias",
        AddWithBias,
        "mistake",
        "I left nn.Linear's default bias on the three layers.",
    ),
    BlindCase(
        CHECK,
        "broadcast_swapped",
        AddBroadcastSwapped,
        "mistake",
        "I unsqueezed queries at -3 and keys at -2, so the scores come out (B, T_k, T_q).",
    ),
    BlindCase(CHECK, "mask_ignored", AddMaskIgnored, "mistake", "I never applied the mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        AddMaskInverted,
        "mistake",
        "I passed ~mask, treating True as blocked.",
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
        "sums_keys",
        AddSumsKeys,
        "mistake",
        "I multiplied the weights with the keys instead of the values.",
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
        "returns_out_only",
        AddReturnsOutOnly,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFill1e9,
        "mistake",
        "I filled masked scores with -1e9; a query with no visible key spreads its weight "
        "over the masked keys.",
    ),
    BlindCase(
        CHECK, "einsum", AddEinsum, "correct", "All products with einsum on the layers' weights."
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "A loop over the queries, one (B, T_k) row of scores at a time, then bmm.",
    ),
    BlindCase(
        CHECK,
        "options_and_where",
        AddOptions,
        "correct",
        "Extra dropout and projected_keys arguments; w_v as a matmul with its weight; "
        "torch.where with the dtype's lowest value.",
    ),
    BlindCase(
        CHECK,
        "expand_and_tanh_module",
        AddTanhModule,
        "correct",
        "Queries and keys expanded to (B, T_q, T_k, h) explicitly, nn.Tanh as a submodule.",
    ),
]
