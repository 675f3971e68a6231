"""Blind set B14, check_additive_attention (chapter 6): w_v^T tanh(W_q q + W_k k) attention."""

from __future__ import annotations

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

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, Tq, Tk, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _msoftmax(self.w_v(self.features(queries, keys)).squeeze(-1), mask)
        return w @ values, w


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.features(queries, keys))).squeeze(-1)
        w = _msoftmax(scores, mask)
        return w @ values, w


class AddReLU(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)
        w = _msoftmax(scores, mask)
        return w @ values, w


class AddTanhSeparately(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = torch.tanh(self.W_q(queries)).unsqueeze(-2)
        k = torch.tanh(self.W_k(keys)).unsqueeze(-3)
        scores = self.w_v(q + k).squeeze(-1)  # tanh of each projection, then add
        w = _msoftmax(scores, mask)
        return w @ values, w


class AddPolarity(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        w = _msoftmax(scores, None if mask is None else ~mask)
        return w @ values, w


class AddIgnoresMask(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        w = scores.softmax(dim=-1)
        return w @ values, w


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=1))
        return w @ values, w


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # Linear's default bias
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        f = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        w = _msoftmax(self.w_v(torch.tanh(f)).squeeze(-1), mask)
        return w @ values, w


class AddMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        w = torch.softmax(scores, dim=-1)
        return torch.bmm(w, values), w


class AddKeysAsValues(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        w = _msoftmax(scores, mask)
        return w @ self.W_k(keys), w  # the keys are what we attend to


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        hidden = torch.tanh(self.features(queries, keys))  # (B, Tq, Tk, h)
        scores = torch.einsum("bqkh,h->bqk", hidden, self.w_v.weight[0])
        weights = _msoftmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class AddQueryLoop(_Base):
    """One query at a time, stacked; a project_keys helper and an unused dropout argument."""

    def __init__(self, query_dim, key_dim, hidden_dim, dropout: float = 0.0):
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.W_k(keys)

    def forward(self, queries, keys, values, mask=None):
        k = self.project_keys(keys)  # (B, Tk, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, Tk)
        scores = torch.stack(rows, dim=1)  # (B, Tq, Tk)
        if mask is not None:
            mask = mask.expand_as(scores)
        weights = _msoftmax(scores, mask)
        return self.dropout(weights) @ values, weights


class AddExpandCat(_Base):
    def forward(self, queries, keys, values, mask=None):
        B, Tq, _ = queries.shape
        Tk = keys.shape[1]
        q = self.W_q(queries)[:, :, None, :].expand(B, Tq, Tk, -1)
        k = self.W_k(keys)[:, None, :, :].expand(B, Tq, Tk, -1)
        scores = (torch.tanh(q + k) @ self.w_v.weight.T)[..., 0]
        weights = _msoftmax(scores, mask)
        return torch.bmm(weights, values), weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I applied the tanh after w_v, to the score.",
    ),
    BlindCase(CHECK, "relu", AddReLU, "mistake", "I used relu instead of tanh."),
    BlindCase(
        CHECK,
        "tanh_separately",
        AddTanhSeparately,
        "mistake",
        "I took the tanh of W_q q and of W_k k separately and added them.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        AddPolarity,
        "mistake",
        "I inverted the mask, treating True as blocked.",
    ),
    BlindCase(CHECK, "ignores_mask", AddIgnoresMask, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries.",
    ),
    BlindCase(
        CHECK,
        "with_bias",
        AddWithBias,
        "mistake",
        "I kept nn.Linear's default bias on the three layers.",
    ),
    BlindCase(
        CHECK,
        "minus_1e9",
        AddMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key attends to the padding.",
    ),
    BlindCase(
        CHECK,
        "mixes_projected_keys",
        AddKeysAsValues,
        "mistake",
        "I mixed the projected keys W_k k instead of the values.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        AddEinsum,
        "correct",
        "einsum with w_v's weight vector and for the weighted sum of the values.",
    ),
    BlindCase(
        CHECK,
        "query_loop",
        AddQueryLoop,
        "correct",
        "A loop over the queries, a project_keys helper, an extra dropout defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "expand_bmm",
        AddExpandCat,
        "correct",
        "Both projections expanded to (B, T_q, T_k, h), w_v applied as a matmul, bmm.",
    ),
]
