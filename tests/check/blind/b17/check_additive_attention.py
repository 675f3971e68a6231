"""Blind set B17, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The right layers; each mistake below changes only ``forward``."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(q + k).squeeze(-1)  # tanh is only for the hidden layer of an MLP
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = torch.tanh(self.w_v(q + k)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddRelu(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(F.relu(q + k)).squeeze(-1)  # a one-hidden-layer MLP with ReLU
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias=True
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddAxesSwapped(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-3)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(-2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        weights = torch.softmax(scores, dim=-2)  # over the keys, which are on axis -2 here
        if mask is not None:
            weights = weights * mask.transpose(-2, -1)
        return weights.transpose(-2, -1) @ values, weights


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=1))
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)  # the padded keys are zero vectors anyway
        return weights @ values, weights


class AddFillMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class AddSqueezeAll(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze()  # drop the size-1 axis of w_v
        weights = _masked_softmax(scores, mask)
        return torch.matmul(weights, values), weights


class AddNoSoftmax(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        weights = self.w_v(torch.tanh(q + k)).squeeze(-1)  # the scores are the weights
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        return weights @ values, weights


class AddSumInsteadOfWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = torch.tanh(q + k).sum(dim=-1)  # w_v^T h: add up the hidden units
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddScaled(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(-2)
        k = self.W_k(keys).unsqueeze(-3)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        scores = scores / math.sqrt(self.W_q.out_features)  # scaled, as in dot-product attention
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    """einsum with w_v's weight row; the mask through torch.where."""

    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries)[..., :, None, :] + self.W_k(keys)[..., None, :, :])
        scores = torch.einsum("...qkh,h->...qk", hidden, self.w_v.weight[0])
        if mask is None:
            weights = scores.softmax(-1)
        else:
            mask = mask.expand_as(scores)
            empty = ~mask.any(-1, keepdim=True)
            scores = torch.where(mask | empty, scores, torch.full_like(scores, float("-inf")))
            weights = torch.where(empty, torch.zeros_like(scores), scores.softmax(-1))
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddProjectedKeys(nn.Module):
    """A project_keys helper, an optional projected_keys argument and a dropout with default 0."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.W_k(keys)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        if projected_keys is None:
            projected_keys = self.project_keys(keys)
        features = self.W_q(queries).unsqueeze(-2) + projected_keys.unsqueeze(-3)
        features = torch.tanh(features)
        scores = self.w_v(features).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return torch.bmm(self.dropout(weights), values) if values.dim() == 3 else (
            self.dropout(weights) @ values
        ), weights


class AddLoopOverQueries(_Base):
    """One query at a time, the rows stacked; the masked softmax by exp and division."""

    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[-2]):
            q = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=-2)  # (B, T_q, T_k)
        if mask is None:
            mask = torch.ones_like(scores, dtype=torch.bool)
        mask = mask.expand_as(scores)
        top = scores.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True)
        top = torch.nan_to_num(top, neginf=0.0).detach()
        e = torch.exp(scores - top) * mask
        total = e.sum(-1, keepdim=True)
        weights = e / torch.where(total > 0, total, torch.ones_like(total))
        return weights @ values, weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfterWv,
        "mistake",
        "I put the tanh after w_v, on the score, instead of before it.",
    ),
    BlindCase(
        CHECK,
        "relu_not_tanh",
        AddRelu,
        "mistake",
        "I used a ReLU as the hidden nonlinearity instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "layers_with_bias",
        AddWithBias,
        "mistake",
        "I kept nn.Linear's default bias=True on W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "query_key_axes_swapped",
        AddAxesSwapped,
        "mistake",
        "I broadcast queries on axis -3 and keys on axis -2, so my scores and weights are "
        "(T_k, T_q); I returned the weights in that layout and masked after the softmax.",
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
        "mask_ignored",
        AddMaskIgnored,
        "mistake",
        "I never used the mask, thinking padded keys are zero and so harmless.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9; a query with no visible key spreads its weight over "
        "the padding.",
    ),
    BlindCase(
        CHECK,
        "squeeze_all",
        AddSqueezeAll,
        "mistake",
        "I wrote .squeeze() without a dim, which also drops a batch or query axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "no_softmax",
        AddNoSoftmax,
        "mistake",
        "I used the raw scores as the weights (masked to 0), forgetting the softmax.",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_w_v",
        AddSumInsteadOfWv,
        "mistake",
        "I reduced the tanh features by summing them instead of applying w_v.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_hidden",
        AddScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as in scaled dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        AddEinsum,
        "correct",
        "einsum with w_v.weight[0] for the score, torch.where for the mask.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_dropout",
        AddProjectedKeys,
        "correct",
        "A project_keys helper, optional projected_keys and dropout (default 0) arguments, bmm "
        "for 3-D values.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "Scores one query at a time and stacked; the masked softmax written with exp and a "
        "division guarded for empty rows.",
    ),
]
