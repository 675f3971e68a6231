"""Blind set B12, check_additive_attention (chapter 6): w_v^T tanh(W_q q + W_k k)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_additive_attention"


class _Base(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def feats(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, Tq, Tk, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = masked_softmax(self.w_v(self.feats(queries, keys)).squeeze(-1), mask)
        return w @ values, w


class AddTanhAfter(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = masked_softmax(torch.tanh(self.w_v(self.feats(queries, keys))).squeeze(-1), mask)
        return w @ values, w


class AddSoftmaxQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.feats(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=-2))
        return w @ values, w


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = torch.softmax(self.w_v(torch.tanh(self.feats(queries, keys))).squeeze(-1), -1)
        return w @ values, w


class AddPolarity(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.feats(queries, keys))).squeeze(-1)
        w = masked_softmax(scores, None if mask is None else ~mask)
        return w @ values, w


class AddWithBiases(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__(query_dim, key_dim, hidden_dim)
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias
        self.W_k = nn.Linear(key_dim, hidden_dim)

    def forward(self, queries, keys, values, mask=None):
        w = masked_softmax(self.w_v(torch.tanh(self.feats(queries, keys))).squeeze(-1), mask)
        return w @ values, w


class AddTanhSeparately(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.w_v(torch.tanh(self.W_q(queries)))  # (B, Tq, 1)
        k = self.w_v(torch.tanh(self.W_k(keys)))  # (B, Tk, 1)
        w = masked_softmax(q + k.transpose(-2, -1), mask)
        return w @ values, w


class AddWrongBroadcast(_Base):
    def forward(self, queries, keys, values, mask=None):
        f = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (B, Tk, Tq, h)
        scores = self.w_v(torch.tanh(f)).squeeze(-1)
        w = masked_softmax(scores, mask)
        return w @ values, w


class AddFillMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.feats(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        w = scores.softmax(-1)
        return w @ values, w


class AddPoolKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = masked_softmax(self.w_v(torch.tanh(self.feats(queries, keys))).squeeze(-1), mask)
        return w @ keys, w  # the keys are the encoder states anyway


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        scores = torch.einsum(
            "bqkh,h->bqk", torch.tanh(q[:, :, None] + k[:, None]), self.w_v.weight[0]
        )
        w = masked_softmax(scores, mask)
        return torch.einsum("bqk,bkv->bqv", w, values), w


class AddLoopOverQueries(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, Tk, h), once for all queries
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, Tk)
        w = masked_softmax(torch.stack(rows, dim=1), mask)
        return self.dropout(w) @ values, w


class AddOwnSoftmax(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.feats(queries, keys)))[..., 0]
        if mask is None:
            w = scores.softmax(-1)
        else:
            m = mask.expand_as(scores)
            has = m.any(-1, keepdim=True)
            s = torch.where(m, scores, torch.full_like(scores, float("-inf")))
            w = torch.where(has, s, torch.zeros_like(s)).softmax(-1) * has
        return torch.matmul(w, values), w


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfter,
        "mistake",
        "I applied tanh after w_v instead of before it.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxQueries,
        "mistake",
        "I took the softmax over dim=-2, the queries.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        AddMaskIgnored,
        "mistake",
        "I took a plain softmax and never used the mask.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        AddPolarity,
        "mistake",
        "I passed ~mask, thinking True meant padding.",
    ),
    BlindCase(
        CHECK,
        "projections_with_bias",
        AddWithBiases,
        "mistake",
        "I left nn.Linear's default bias on W_q and W_k.",
    ),
    BlindCase(
        CHECK,
        "tanh_separately",
        AddTanhSeparately,
        "mistake",
        "I scored queries and keys separately, w_v tanh(W_q q) + w_v tanh(W_k k).",
    ),
    BlindCase(
        CHECK,
        "wrong_broadcast",
        AddWrongBroadcast,
        "mistake",
        "I unsqueezed the queries at -3 and the keys at -2, so scores come out (Tk, Tq).",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9 before a plain softmax.",
    ),
    BlindCase(
        CHECK,
        "pools_keys",
        AddPoolKeys,
        "mistake",
        "I returned the weighted sum of the keys instead of the values.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        AddEinsum,
        "correct",
        "All products with einsum and the layers' weight matrices.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "Keys projected once, a loop over the queries; an extra dropout argument (0).",
    ),
    BlindCase(
        CHECK,
        "own_masked_softmax",
        AddOwnSoftmax,
        "correct",
        "Its own masked softmax with torch.where, empty rows zeroed by multiplication.",
    ),
]
