"""Blind set B9, check_additive_attention (chapter 6): Bahdanau's additive scoring."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _safe_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    empty = ~mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)


class _Base(nn.Module):
    """The three layers as the book names them; each mistake only changes ``forward``."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        weights = _safe_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        weights = _safe_softmax(torch.tanh(self.w_v(feats)).squeeze(-1), mask)
        return weights @ values, weights


class AddWithBias(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__(query_dim, key_dim, hidden_dim)
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias=True
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _safe_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddPairwiseNoUnsqueeze(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries) + self.W_k(keys))  # query i + key i only
        scores = self.w_v(feats).squeeze(-1).unsqueeze(-2)  # (B, 1, T)
        weights = _safe_softmax(scores, mask)
        return weights @ values, weights


class AddKeysOnRows(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2))
        scores = self.w_v(feats).squeeze(-1)  # (B, T_k, T_q): keys on the rows
        weights = _safe_softmax(scores, None if mask is None else mask.transpose(-2, -1))
        weights = weights.transpose(-2, -1)  # back to (B, T_q, T_k)
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = torch.softmax(self.w_v(feats).squeeze(-1), dim=-1)
        return weights @ values, weights


class AddMaskPolarity(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(feats).squeeze(-1)
        weights = _safe_softmax(scores, None if mask is None else ~mask)
        return weights @ values, weights


class AddMixesKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _safe_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ keys, weights  # keys, not values


class AddSqueezeAll(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(feats).squeeze()  # also drops T_q = 1 or B = 1
        weights = _safe_softmax(scores, mask)
        return weights @ values, weights


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(feats).squeeze(-1) / math.sqrt(self.W_q.out_features)
        weights = _safe_softmax(scores, mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = torch.einsum("...qd,hd->...qh", queries, self.W_q.weight)
        k = torch.einsum("...kd,hd->...kh", keys, self.W_k.weight)
        feats = torch.tanh(q[..., :, None, :] + k[..., None, :, :])  # (..., T_q, T_k, h)
        scores = torch.einsum("...qkh,h->...qk", feats, self.w_v.weight[0])
        weights = _safe_softmax(scores, mask)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddQueryLoop(_Base):
    def forward(self, queries, keys, values, mask=None, dropout: float = 0.0):
        k = self.W_k(keys)  # (B, T_k, h), computed once
        outs, all_weights = [], []
        for t in range(queries.shape[-2]):
            q = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k)
            m = None
            if mask is not None:
                m = mask.expand(*scores.shape[:-1], queries.shape[-2], keys.shape[-2])[..., t, :]
            w = _safe_softmax(scores.unsqueeze(-2), None if m is None else m.unsqueeze(-2))
            all_weights.append(w)
            outs.append(w @ values)
        return torch.cat(outs, dim=-2), torch.cat(all_weights, dim=-2)


class AddFloat64(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).double().unsqueeze(-2)
        k = self.W_k(keys).double().unsqueeze(-3)
        scores = (torch.tanh(q + k) @ self.w_v.weight.double().T).squeeze(-1)
        weights = _safe_softmax(scores, mask)
        return (weights @ values.double()).to(values.dtype), weights.to(values.dtype)


class AddWhereMask(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries)[..., :, None, :] + self.W_k(keys)[..., None, :, :])
        scores = self.w_v(feats)[..., 0]
        if mask is None:
            weights = scores.softmax(-1)
        else:
            mask = mask.expand_as(scores)
            any_key = mask.any(-1, keepdim=True)
            scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
            scores = torch.where(any_key, scores, torch.zeros_like(scores))
            weights = torch.where(any_key, scores.softmax(-1), torch.zeros_like(scores))
        return torch.matmul(weights, values), weights


CASES = [
    BlindCase(
        CHECK, "no_tanh", AddNoTanh, "mistake", "I scored w_v(W_q q + W_k k) and forgot the tanh."
    ),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I put the tanh after w_v instead of before it.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_with_bias",
        AddWithBias,
        "mistake",
        "I left nn.Linear's default bias=True on W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "query_i_plus_key_i",
        AddPairwiseNoUnsqueeze,
        "mistake",
        "I added W_q(queries) + W_k(keys) without unsqueezing: right for one query, but "
        "with several, query i is only scored against key i and every query shares that "
        "one row of weights (and it fails when T_q != T_k).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddKeysOnRows,
        "mistake",
        "I broadcast the keys on the rows (B, T_k, T_q) and took the softmax over the last "
        "axis, the queries, then transposed back.",
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
        AddMaskPolarity,
        "mistake",
        "I treated True in the mask as 'hide this key'.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        AddMixesKeys,
        "mistake",
        "I returned weights @ keys instead of weights @ values.",
    ),
    BlindCase(
        CHECK,
        "squeeze_without_dim",
        AddSqueezeAll,
        "mistake",
        "I dropped w_v's last axis with .squeeze() without a dim, which also removes "
        "T_q = 1 (or B = 1) and breaks the shapes.",
    ),
    BlindCase(
        CHECK,
        "scaled_like_dot_product",
        AddScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim) as in scaled dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_weights",
        AddEinsum,
        "correct",
        "I wrote the projections and the reduction by w_v with einsum on the layers' weights.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddQueryLoop,
        "correct",
        "I projected the keys once and looped over the queries one at a time, then "
        "concatenated; an extra dropout argument defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        AddFloat64,
        "correct",
        "I computed the scores and softmax in float64 and cast back.",
    ),
    BlindCase(
        CHECK,
        "where_mask",
        AddWhereMask,
        "correct",
        "I indexed with [..., :, None, :] instead of unsqueeze and masked with torch.where.",
    ),
]
