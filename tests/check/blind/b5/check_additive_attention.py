"""Chapter 6, "Your turn": ``MyAdditiveAttention(query_dim, key_dim, hidden_dim)``.

``score(q, k) = w_v^T tanh(W_q q + W_k k)``, masked softmax over the keys, weighted sum of the
values; ``W_q``, ``W_k``, ``w_v`` bias-free. ``forward(queries, keys, values, mask=None)``
returns ``(out, weights)``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_additive_attention"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _Layers(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# --- mistakes ---------------------------------------------------------------------------------


class ReluFeatures(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.relu(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values, weights


class LinearsWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias=True kept
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values, weights


class NoPairwiseGrid(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries) + self.W_k(keys))  # query i meets key i only
        scores = self.w_v(features).squeeze(-1)  # (B, T)
        scores = scores.unsqueeze(-2).expand(*scores.shape[:-1], queries.shape[-2], -1)
        weights = _softmax(scores, mask)
        return weights @ values, weights


class GridTheOtherWayRound(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.W_q(queries).unsqueeze(-3)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(-2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        mask_t = None if mask is None else mask.transpose(-2, -1)
        weights = _softmax(scores, mask_t).transpose(-2, -1)  # back to (B, T_q, T_k)
        return weights @ values, weights


class SqueezeEverything(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(features).squeeze()  # drops every axis of size 1
        weights = _softmax(scores, mask)
        return weights @ values, weights


class HiddenWhereMaskTrue(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(features).squeeze(-1)
        weights = _softmax(scores, None if mask is None else ~mask)  # True meant "pad" to me
        return weights @ values, weights


class MixesTheKeys(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ keys, weights  # the keys are the encoder states anyway


class ProjectionsSwapped(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.W_k(queries).unsqueeze(-2)  # W_k on the queries
        k = self.W_q(keys).unsqueeze(-3)  # W_q on the keys
        weights = _softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class SigmoidScores(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = torch.sigmoid(self.w_v(features).squeeze(-1))  # each key gated on its own
        if mask is not None:
            weights = weights * mask
        return weights @ values, weights


class ReturnsOnlyOut(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values


# --- correct variants -------------------------------------------------------------------------


class EinsumScore(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.W_q(queries)[..., :, None, :]  # (..., T_q, 1, h)
        k = self.W_k(keys)[..., None, :, :]  # (..., 1, T_k, h)
        scores = torch.einsum("...qkh,h->...qk", torch.tanh(q + k), self.w_v.weight[0])
        weights = _softmax(scores, mask)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class WithLibrarySoftmaxAndCache(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        queries: Tensor,
        keys: Tensor,
        values: Tensor,
        mask: Tensor | None = None,
        projected_keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        if projected_keys is None:
            projected_keys = self.W_k(keys)
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + projected_keys.unsqueeze(-3))
        weights = masked_softmax(self.w_v(features).squeeze(-1), mask)
        return self.dropout(weights) @ values, weights


class LoopOverQueries(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[-2]):
            q = self.W_q(queries[..., t : t + 1, :])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=-2)  # (B, T_q, T_k)
        weights = _softmax(scores, mask)
        return torch.matmul(weights, values), weights


CASES = [
    BlindCase(
        CHECK,
        "relu_features",
        ReluFeatures,
        "mistake",
        "I used ReLU instead of tanh on W_q q + W_k k.",
    ),
    BlindCase(
        CHECK,
        "linears_with_bias",
        LinearsWithBias,
        "mistake",
        "I kept nn.Linear's default bias=True on W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "no_pairwise_grid",
        NoPairwiseGrid,
        "mistake",
        "I added W_q(queries) + W_k(keys) without the unsqueezes, so query i only meets key i, and "
        "copied that one row of scores to every query.",
    ),
    BlindCase(
        CHECK,
        "grid_the_other_way_round",
        GridTheOtherWayRound,
        "mistake",
        "I built the score grid as (keys, queries) and took the softmax over its last axis, i.e. "
        "over the queries, before transposing back.",
    ),
    BlindCase(
        CHECK,
        "squeeze_everything",
        SqueezeEverything,
        "mistake",
        "I called .squeeze() without an axis after w_v, which also drops a batch or query axis "
        "of size 1.",
    ),
    BlindCase(
        CHECK,
        "hidden_where_mask_true",
        HiddenWhereMaskTrue,
        "mistake",
        "I inverted the mask before the softmax, reading True as padding.",
    ),
    BlindCase(
        CHECK,
        "mixes_the_keys",
        MixesTheKeys,
        "mistake",
        "I took the weighted sum of the keys instead of the values.",
    ),
    BlindCase(
        CHECK,
        "projections_swapped",
        ProjectionsSwapped,
        "mistake",
        "I applied W_k to the queries and W_q to the keys.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_scores",
        SigmoidScores,
        "mistake",
        "I turned each score into a weight with a sigmoid (and multiplied by the mask) instead "
        "of a softmax over the keys.",
    ),
    BlindCase(
        CHECK,
        "returns_only_out",
        ReturnsOnlyOut,
        "mistake",
        "My forward returns only the output, not the pair (out, weights).",
    ),
    BlindCase(
        CHECK,
        "einsum_score",
        EinsumScore,
        "correct",
        "I applied w_v with an einsum on its weight vector and mixed the values with einsum.",
    ),
    BlindCase(
        CHECK,
        "with_library_softmax_and_cache",
        WithLibrarySoftmaxAndCache,
        "correct",
        "I used the book's masked_softmax, a dropout argument and an optional projected_keys "
        "cache, and created W_k before W_q.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        LoopOverQueries,
        "correct",
        "I scored one query at a time in a loop and stacked the rows of scores.",
    ),
]
