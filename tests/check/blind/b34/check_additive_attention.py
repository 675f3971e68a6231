"""Blind set B34, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has, 0.0)
    return scores.softmax(-1).masked_fill(~has, 0.0)


class _Base(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, T_q, T_k, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.features(queries, keys)).squeeze(-1)
        w = _msoftmax(scores, mask)
        return w @ values, w


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.features(queries, keys))).squeeze(-1)
        w = _msoftmax(scores, mask)
        return w @ values, w


class AddReluNotTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)
        w = _msoftmax(scores, mask)
        return w @ values, w


class AddSoftmaxQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=1))  # dim 1 after the batch
        return w @ values, w


class AddPolarity(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        w = _msoftmax(scores, None if mask is None else ~mask)
        return w @ values, w


class AddMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        w = scores.softmax(-1)
        return w @ values, w


class AddNoBroadcast(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries) + self.W_k(keys)  # works when T_q == T_k ... or T_q == 1
        scores = self.w_v(torch.tanh(feats)).squeeze(-1).unsqueeze(-2)  # (B, 1, T_k)
        w = _msoftmax(scores.expand(*scores.shape[:-2], queries.shape[-2], -1), mask)
        return w @ values, w


class AddKeysByQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        f = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (B, T_k, T_q, h)
        scores = self.w_v(torch.tanh(f)).squeeze(-1)  # (B, T_k, T_q)
        m = None if mask is None else mask.transpose(-2, -1)
        w = (
            torch.nan_to_num(scores.masked_fill(~m, float("-inf")).softmax(-1))
            if m is not None
            else scores.softmax(-1)
        )
        w = w.transpose(-2, -1)  # back to (B, T_q, T_k)
        return w @ values, w


class AddWqOnKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        f = self.W_k(queries).unsqueeze(-2) + self.W_q(keys).unsqueeze(-3)  # swapped layers
        scores = self.w_v(torch.tanh(f)).squeeze(-1)
        w = _msoftmax(scores, mask)
        return w @ values, w


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # default bias=True
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        f = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        w = _msoftmax(self.w_v(torch.tanh(f)).squeeze(-1), mask)
        return w @ values, w


class AddOutputWeighsKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        w = _msoftmax(scores, mask)
        return w @ keys, w  # the keys are the encoder states anyway


class AddSqueezeAll(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze()  # drops size-1 dims
        w = _msoftmax(scores, mask)
        return w @ values, w


class AddTanhEachSide(_Base):
    def forward(self, queries, keys, values, mask=None):
        f = torch.tanh(self.W_q(queries)).unsqueeze(-2) + torch.tanh(self.W_k(keys)).unsqueeze(-3)
        w = _msoftmax(self.w_v(f).squeeze(-1), mask)
        return w @ values, w


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None):
        f = torch.tanh(self.W_q(queries)[..., :, None, :] + self.W_k(keys)[..., None, :, :])
        scores = torch.einsum("...qkh,h->...qk", f, self.w_v.weight[0])
        w = _msoftmax(scores, mask)
        return torch.einsum("...qk,...kd->...qd", w, values), w


class AddLoopOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[-2]):
            q = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=-2)  # (B, T_q, T_k)
        if mask is not None:
            mask = mask.expand_as(scores)
            empty = ~mask.any(-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
            w = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            w = scores.softmax(-1)
        return torch.matmul(w, values), w


class AddDropoutArg(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        scores = self.w_v((q + k).tanh())[..., 0]
        w = _msoftmax(scores, mask)
        return self.dropout(w) @ values, w


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh"),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I applied the tanh after w_v instead of before",
    ),
    BlindCase(CHECK, "relu", AddReluNotTanh, "mistake", "I used relu instead of tanh"),
    BlindCase(
        CHECK,
        "softmax_dim1",
        AddSoftmaxQueries,
        "mistake",
        "I took the softmax over dim=1, which is the queries",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        AddPolarity,
        "mistake",
        "I passed ~mask to the softmax, thinking True means padding",
    ),
    BlindCase(CHECK, "minus_1e9_fill", AddMinus1e9, "mistake", "I filled masked scores with -1e9"),
    BlindCase(
        CHECK,
        "no_pairwise_broadcast",
        AddNoBroadcast,
        "mistake",
        "I added W_q q and W_k k without unsqueezing, so they are not all pairs",
    ),
    BlindCase(
        CHECK,
        "grid_keys_by_queries",
        AddKeysByQueries,
        "mistake",
        "I built the grid keys by queries, took the softmax, then transposed it",
    ),
    BlindCase(
        CHECK,
        "swapped_layers",
        AddWqOnKeys,
        "mistake",
        "I projected the queries with W_k and the keys with W_q",
    ),
    BlindCase(
        CHECK,
        "layers_with_bias",
        AddWithBias,
        "mistake",
        "I left nn.Linear's default bias on the three layers",
    ),
    BlindCase(
        CHECK,
        "weighs_the_keys",
        AddOutputWeighsKeys,
        "mistake",
        "I took the weighted sum of the keys instead of the values",
    ),
    BlindCase(
        CHECK,
        "squeeze_everything",
        AddSqueezeAll,
        "mistake",
        "I called .squeeze() with no dim after w_v",
    ),
    BlindCase(
        CHECK,
        "tanh_each_side",
        AddTanhEachSide,
        "mistake",
        "I applied tanh to W_q q and W_k k separately and then added",
    ),
    BlindCase(
        CHECK,
        "einsum_wv",
        AddEinsum,
        "correct",
        "I used einsum with w_v's weight vector for the score",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "I looped over the queries one at a time and stacked the scores",
    ),
    BlindCase(
        CHECK,
        "dropout_argument",
        AddDropoutArg,
        "correct",
        "I added an optional dropout (0 by default) and created W_k first",
    ),
]
