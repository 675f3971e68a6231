"""Blind set B10, check_additive_attention (chapter 6): additive (Bahdanau) attention as a module,
as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The three bias-free layers under the book's names; each mistake only changes ``forward``."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)  # (B, T_q, T_k, h)
        weights = _masked_softmax(self.w_v(h).squeeze(-1), mask)
        return weights @ values, weights


class AddTanhAfterWv(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        scores = torch.tanh(self.w_v(h)).squeeze(-1)  # squash the score
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.W_q(queries).unsqueeze(1)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        if mask is not None:
            scores = scores.masked_fill(~mask.transpose(-2, -1), float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=-1)).transpose(-2, -1)  # (B, T_q, T_k)
        return weights @ values, weights


class AddMaskPolarity(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = torch.tanh(self.W_q(queries)[:, :, None] + self.W_k(keys)[:, None])
        scores = self.w_v(h)[..., 0]
        if mask is not None:
            mask = ~mask  # True = padding to hide
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddMaskUnused(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = torch.softmax(self.w_v(h).squeeze(-1), dim=-1)
        return torch.bmm(weights, values), weights


class AddSumInsteadOfWv(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _masked_softmax(h.sum(dim=-1), mask)  # one number per (query, key)
        return weights @ values, weights


class AddMultiplies(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) * self.W_k(keys).unsqueeze(-3))
        weights = _masked_softmax(self.w_v(h).squeeze(-1), mask)
        return weights @ values, weights


class AddMinus1e9(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(h).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = F.softmax(scores, dim=-1)
        return weights @ values, weights


class AddWeightsTimesKeys(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys)
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + k.unsqueeze(-3))
        weights = _masked_softmax(self.w_v(h).squeeze(-1), mask)
        return weights @ keys, weights  # the weighted sum of the keys


class AddMaskAfterSoftmax(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = torch.softmax(self.w_v(h).squeeze(-1), dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # padding gets no weight
        return weights @ values, weights


class AddSqueezeAll(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(h).squeeze()  # drop the size-1 axis of w_v
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddValuesProjected(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys)
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + k.unsqueeze(-3))
        weights = _masked_softmax(self.w_v(h).squeeze(-1), mask)
        return weights @ k, weights  # the values seen through W_k, like the keys


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        scores = torch.einsum(
            "bqkh,h->bqk", torch.tanh(q[:, :, None] + k[:, None]), self.w_v.weight[0]
        )
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = torch.isneginf(scores).all(dim=-1, keepdim=True)
            weights = scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqk,bkv->bqv", weights, values), weights


class AddWithOptions(nn.Module):
    """Extra dropout (0 by default), a project_keys helper and optional precomputed keys."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.W_k(keys)

    def forward(
        self,
        queries: Tensor,
        keys: Tensor,
        values: Tensor,
        mask: Tensor | None = None,
        projected_keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        k = self.project_keys(keys) if projected_keys is None else projected_keys
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + k.unsqueeze(-3))
        scores = self.w_v(features).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return self.dropout(weights) @ values, weights


class AddLoopOverQueries(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """One query position at a time; the rows stacked at the end."""
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[1]):
            q_t = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q_t + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        if mask is not None:
            mask = mask.expand_as(scores)
            visible = mask.any(-1, keepdim=True)
            scores = torch.where(mask, scores, float("-inf")).where(visible, 0.0)
            weights = torch.softmax(scores, -1).where(visible, 0.0)
        else:
            weights = torch.softmax(scores, -1)
        return weights @ values, weights


class AddExplicitWeights(_Base):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = queries @ self.W_q.weight.T  # (B, T_q, h)
        k = keys @ self.W_k.weight.T  # (B, T_k, h)
        feats = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, T_q, T_k, h)
        scores = (feats * self.w_v.weight.view(-1)).sum(-1)
        weights = _masked_softmax(scores, mask)
        return torch.matmul(weights, values), weights


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        AddNoTanh,
        "mistake",
        "I added the projected query and key and went straight to w_v, without the tanh.",
    ),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfterWv,
        "mistake",
        "I put the tanh after w_v, on the score, instead of before it.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I broadcast with the axes the other way, (B, T_k, T_q), took the softmax over the last "
        "axis (the queries) and transposed afterwards.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        AddMaskPolarity,
        "mistake",
        "I inverted the mask, thinking True marks the padding.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        AddMaskUnused,
        "mistake",
        "I took the plain softmax and never used the mask.",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_w_v",
        AddSumInsteadOfWv,
        "mistake",
        "I summed the tanh features over the hidden axis instead of applying w_v.",
    ),
    BlindCase(
        CHECK,
        "multiplied_not_added",
        AddMultiplies,
        "mistake",
        "I multiplied W_q q and W_k k instead of adding them.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        AddMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key spreads its weight "
        "over the padding.",
    ),
    BlindCase(
        CHECK,
        "weighted_keys",
        AddWeightsTimesKeys,
        "mistake",
        "I returned weights @ keys instead of weights @ values.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        AddMaskAfterSoftmax,
        "mistake",
        "I zeroed the masked weights after the softmax, so the rest no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "squeeze_all",
        AddSqueezeAll,
        "mistake",
        "I used .squeeze() without an axis after w_v, which also drops a query axis of size 1 "
        "(one query, as the decoder of chapter 7 asks).",
    ),
    BlindCase(
        CHECK,
        "values_through_W_k",
        AddValuesProjected,
        "mistake",
        "I mixed the projected keys W_k k instead of the values.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        AddEinsum,
        "correct",
        "einsum with the layers' weight matrices for every product.",
    ),
    BlindCase(
        CHECK,
        "with_options",
        AddWithOptions,
        "correct",
        "An extra dropout argument (0 by default), a project_keys helper and an optional "
        "projected_keys argument.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "A loop over the query positions, the rows stacked; the mask applied with Tensor.where.",
    ),
    BlindCase(
        CHECK,
        "explicit_weights",
        AddExplicitWeights,
        "correct",
        "The projections written as products with .weight.T; w_v as a weighted sum over the "
        "hidden axis.",
    ),
]
