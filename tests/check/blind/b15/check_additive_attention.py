"""Blind set B15, check_additive_attention (chapter 6): Bahdanau's additive score."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msm(scores: Tensor, mask: Tensor | None) -> Tensor:
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

    def _feats(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, Tq, Tk, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _msm(self.w_v(self._feats(queries, keys)).squeeze(-1), mask)
        return w @ values, w


class AddTanhAfter(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _msm(torch.tanh(self.w_v(self._feats(queries, keys))).squeeze(-1), mask)
        return w @ values, w


class AddRelu(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _msm(self.w_v(torch.relu(self._feats(queries, keys))).squeeze(-1), mask)
        return w @ values, w


class AddOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=-2))
        return w @ values, w


class AddPolarity(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1)
        w = _msm(scores, None if mask is None else ~mask)
        return w @ values, w


class AddMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        w = scores.softmax(-1)
        return w @ values, w


class AddWrongBroadcast(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (B, Tk, Tq, h)
        scores = self.w_v(torch.tanh(feats)).squeeze(-1)
        scores = scores.reshape(*scores.shape[:-2], queries.shape[-2], keys.shape[-2])
        w = _msm(scores, mask)
        return w @ values, w


class AddPoolsKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _msm(self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1), mask)
        return w @ keys, w  # keys and values were the same in my test


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # default bias=True
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        w = _msm(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return w @ values, w


class AddDotProduct(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.W_q(queries) @ self.W_k(keys).transpose(-2, -1)  # compare in hidden space
        w = _msm(scores, mask)
        return w @ values, w


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    """einsum with w_v's weight; an extra dropout argument (default 0) and project_keys."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.W_k(keys)

    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(
            self.W_q(queries)[..., :, None, :] + self.project_keys(keys)[..., None, :, :]
        )
        scores = torch.einsum("...qkh,h->...qk", feats, self.w_v.weight[0])
        w = _msm(scores, mask)
        return self.dropout(w) @ values, w


class AddWhere(_Base):
    """Explicit expand of both sides, torch.where for the mask, matmul for the pooling."""

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries)[:, :, None, :]
        k = self.W_k(keys)[:, None, :, :]
        scores = self.w_v(torch.tanh(q + k))[..., 0]
        if mask is None:
            w = torch.softmax(scores, -1)
        else:
            mask = mask.expand_as(scores)
            ok = mask.any(-1, keepdim=True)
            s = torch.where(mask, scores, float("-inf"))
            s = torch.where(ok, s, 0.0)
            w = torch.where(ok & mask, torch.softmax(s, -1), 0.0)
        return torch.matmul(w, values), w


class AddLoopQueries(_Base):
    """One query at a time in a Python loop, stacked at the end."""

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, Tk, h)
        outs, ws = [], []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            s = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, Tk)
            m = None
            if mask is not None:
                m = mask.expand(*mask.shape[:-2], queries.shape[1], mask.shape[-1])[..., t, :]
                m = m.expand_as(s)
            w = _msm(s, m)
            outs.append((w.unsqueeze(1) @ values).squeeze(1))
            ws.append(w)
        return torch.stack(outs, 1), torch.stack(ws, 1)


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfter,
        "mistake",
        "I applied tanh after w_v instead of before.",
    ),
    BlindCase(CHECK, "relu_not_tanh", AddRelu, "mistake", "I used ReLU instead of tanh."),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddOverQueries,
        "mistake",
        "I took the softmax over dim=-2, the queries.",
    ),
    BlindCase(
        CHECK, "mask_polarity", AddPolarity, "mistake", "I inverted the mask (True = blocked)."
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddMinus1e9,
        "mistake",
        "I masked with -1e9, so a query with no visible key attends to padding.",
    ),
    BlindCase(
        CHECK,
        "broadcast_wrong_way",
        AddWrongBroadcast,
        "mistake",
        "I unsqueezed queries at -3 and keys at -2, then reshaped (not transposed) the "
        "(T_k, T_q) scores to (T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "pools_keys",
        AddPoolsKeys,
        "mistake",
        "I multiplied the weights by the keys instead of the values.",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        AddWithBias,
        "mistake",
        "I left nn.Linear's default bias=True on the three layers.",
    ),
    BlindCase(
        CHECK,
        "dot_product_score",
        AddDotProduct,
        "mistake",
        "I compared W_q q and W_k k with a dot product instead of w_v tanh(sum).",
    ),
    BlindCase(
        CHECK,
        "einsum_with_extras",
        AddEinsum,
        "correct",
        "einsum with w_v's weight vector; extra dropout (default 0) and project_keys.",
    ),
    BlindCase(
        CHECK,
        "torch_where",
        AddWhere,
        "correct",
        "Explicit [:, :, None] broadcasting; torch.where for the mask.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopQueries,
        "correct",
        "A Python loop over the queries, stacked at the end.",
    ),
]
