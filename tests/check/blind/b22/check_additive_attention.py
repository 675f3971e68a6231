"""Blind set B22, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
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
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, T_q, T_k, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _masked_softmax(self.w_v(self._feats(queries, keys)).squeeze(-1), mask)
        return w @ values, w


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _masked_softmax(torch.tanh(self.w_v(self._feats(queries, keys))).squeeze(-1), mask)
        return w @ values, w


class AddReluNotTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _masked_softmax(self.w_v(torch.relu(self._feats(queries, keys))).squeeze(-1), mask)
        return w @ values, w


class AddQueryBias(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__(query_dim, key_dim, hidden_dim)
        self.W_q = nn.Linear(query_dim, hidden_dim)  # kept nn.Linear's default bias

    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1)
        w = _masked_softmax(scores, mask)
        return w @ values, w


class AddSwappedProjections(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_k(queries).unsqueeze(-2) + self.W_q(keys).unsqueeze(-3)
        w = _masked_softmax(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return w @ values, w


class AddInvertedMask(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1)
        w = _masked_softmax(scores, None if mask is None else ~mask)
        return w @ values, w


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(scores, dim=-2))
        return w @ values, w


class AddSumInsteadOfWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self._feats(queries, keys)).sum(-1)  # reduce to one number per pair
        w = _masked_softmax(scores, mask)
        return w @ values, w


class AddFillMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        w = F.softmax(scores, dim=-1)
        return w @ values, w


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = torch.softmax(self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1), dim=-1)
        return w @ values, w


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1)
        scores = scores / math.sqrt(self.W_q.out_features)  # as in scaled dot product
        w = _masked_softmax(scores, mask)
        return w @ values, w


class AddReturnsWeightsFirst(_Base):
    def forward(self, queries, keys, values, mask=None):
        w = _masked_softmax(self.w_v(torch.tanh(self._feats(queries, keys))).squeeze(-1), mask)
        return w, w @ values


class AddKeysBroadcastWrong(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (B, T_k, T_q, h)
        scores = self.w_v(torch.tanh(feats)).squeeze(-1)
        w = _masked_softmax(scores, mask)
        return w @ values, w


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        scores = torch.einsum(
            "bqkh,h->bqk", torch.tanh(q[:, :, None] + k[:, None]), self.w_v.weight[0]
        )
        w = _masked_softmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", w, values), w


class AddPerQueryLoop(_Base):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        w = masked_softmax(scores, mask)  # the chapter's helper
        return torch.bmm(w, values), w


class AddWithDropout(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries)[..., :, None, :] + self.W_k(keys)[..., None, :, :])
        scores = (feats @ self.w_v.weight.T)[..., 0]
        if mask is None:
            w = scores.softmax(-1)
        else:
            mask = mask.expand_as(scores)
            w = torch.where(mask, scores, -torch.inf)
            empty = ~mask.any(-1, keepdim=True)
            w = torch.where(empty, 0.0, w.masked_fill(empty, 0.0).softmax(-1))
        return self.drop(w) @ values, w


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I put the tanh after w_v instead of before.",
    ),
    BlindCase(CHECK, "relu", AddReluNotTanh, "mistake", "I used ReLU instead of tanh."),
    BlindCase(CHECK, "query_bias", AddQueryBias, "mistake", "I left the default bias on W_q."),
    BlindCase(
        CHECK,
        "swapped_projections",
        AddSwappedProjections,
        "mistake",
        "I applied W_k to the queries and W_q to the keys.",
    ),
    BlindCase(
        CHECK,
        "inverted_mask",
        AddInvertedMask,
        "mistake",
        "I read True in the mask as 'masked out'.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim -2.",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_wv",
        AddSumInsteadOfWv,
        "mistake",
        "I summed the tanh features instead of applying w_v.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9 and used a plain softmax.",
    ),
    BlindCase(CHECK, "mask_ignored", AddMaskIgnored, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "scaled",
        AddScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim) as in dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        AddReturnsWeightsFirst,
        "mistake",
        "I returned (weights, out).",
    ),
    BlindCase(
        CHECK,
        "keys_broadcast_wrong",
        AddKeysBroadcastWrong,
        "mistake",
        "I unsqueezed the queries at -3 and the keys at -2, so the score grid is (T_k, T_q).",
    ),
    BlindCase(CHECK, "einsum", AddEinsum, "correct", "einsum with the three weight matrices."),
    BlindCase(
        CHECK,
        "per_query_loop",
        AddPerQueryLoop,
        "correct",
        "A loop over the queries and the chapter's masked_softmax.",
    ),
    BlindCase(
        CHECK,
        "with_dropout",
        AddWithDropout,
        "correct",
        "An optional dropout (default 0), w_v as a matmul, torch.where for the mask.",
    ),
]
