"""Blind cases for check_additive_attention (chapter 6)."""

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


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)).squeeze(-1)
        w = masked_softmax(scores, mask)
        return w @ values, w


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)))
        w = masked_softmax(scores.squeeze(-1), mask)
        return w @ values, w


class AddSeparateTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = torch.tanh(self.W_q(queries)).unsqueeze(2)
        k = torch.tanh(self.W_k(keys)).unsqueeze(1)
        scores = self.w_v(q + k).squeeze(-1)  # tanh on each part, then added
        w = masked_softmax(scores, mask)
        return w @ values, w


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # default bias=True
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)))
        w = masked_softmax(scores.squeeze(-1), mask)
        return w @ values, w


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)))
        scores = scores.squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=1)
        return w @ values, w


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)))
        w = torch.softmax(scores.squeeze(-1), dim=-1)  # forgot to use the mask
        return w @ values, w


class AddMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)))
        scores = scores.squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        w = torch.softmax(scores, dim=-1)
        return w @ values, w


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None):
        h = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        scores = self.w_v(torch.tanh(h)).squeeze(-1) / h.shape[-1] ** 0.5  # scaled like dot-product
        w = masked_softmax(scores, mask)
        return w @ values, w


class AddNoMaskArg(_Base):
    def forward(self, queries, keys, values):
        scores = self.w_v(torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)))
        w = torch.softmax(scores.squeeze(-1), dim=-1)
        return w @ values, w


class AddEinsum(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        features = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, T_q, T_k, H)
        scores = torch.einsum("bqkh,h->bqk", features, self.w_v.weight[0])
        w = masked_softmax(scores, mask)
        return torch.einsum("bqk,bkv->bqv", w, values), w


class AddLoopOverQueries(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, H)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, H)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        if mask is not None:
            mask = mask.expand_as(scores)
            visible = mask.any(-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~visible, 0.0)
            w = torch.softmax(scores, -1) * visible
        else:
            w = torch.softmax(scores, -1)
        return torch.bmm(self.dropout(w), values), w


CASES = [
    BlindCase(
        CHECK, "no_tanh", AddNoTanh, "mistake", "leaves out the tanh: score = w_v(W_q q + W_k k)"
    ),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "applies tanh after w_v instead of before it",
    ),
    BlindCase(
        CHECK,
        "tanh_on_each_part",
        AddSeparateTanh,
        "mistake",
        "takes tanh of W_q q and of W_k k separately and adds them afterwards",
    ),
    BlindCase(
        CHECK,
        "layers_with_bias",
        AddWithBias,
        "mistake",
        "creates the three nn.Linear layers with their default bias=True",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "takes the softmax over dim=1 (the queries) instead of the keys",
    ),
    BlindCase(CHECK, "mask_ignored", AddMaskIgnored, "mistake", "accepts a mask but never uses it"),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddMinus1e9,
        "mistake",
        "fills masked scores with -1e9 and takes a plain softmax",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_hidden",
        AddScaled,
        "mistake",
        "divides the additive scores by sqrt(hidden_dim), as for dot-product attention",
    ),
    BlindCase(
        CHECK,
        "slip_forward_without_mask",
        AddNoMaskArg,
        "mistake",
        "writes forward without the mask argument",
    ),
    BlindCase(
        CHECK,
        "einsum_with_weights",
        AddEinsum,
        "correct",
        "projects and scores with einsum on the layers' weight matrices instead of calling the layers",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries_dropout",
        AddLoopOverQueries,
        "correct",
        "loops over the queries one at a time, masks itself, and has an optional dropout argument",
    ),
]
