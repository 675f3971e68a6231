"""Blind set B26, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Layers(nn.Module):
    """The three layers as the skeleton names them."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AdditiveWithBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        weights = _masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AdditiveUnsqueezeSwapped(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(1)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AdditiveProjectionsSwapped(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_k(queries).unsqueeze(2)  # W_k for the queries, W_q for the keys
        k = self.W_q(keys).unsqueeze(1)
        weights = _masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AdditiveConcatenated(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W = nn.Linear(query_dim + key_dim, hidden_dim, bias=False)  # W [q; k]
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        T_q, T_k = queries.shape[-2], keys.shape[-2]
        q = queries.unsqueeze(-2).expand(*queries.shape[:-1], T_k, queries.shape[-1])
        k = keys.unsqueeze(-3).expand(*keys.shape[:-2], T_q, T_k, keys.shape[-1])
        scores = self.w_v(torch.tanh(self.W(torch.cat([q, k], dim=-1)))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AdditiveScaled(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)
        scores = scores / math.sqrt(self.W_q.out_features)  # keep the scores small
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AdditiveMaskNotUsed(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        weights = torch.softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), dim=-1)
        return weights @ values, weights


class AdditiveBareSqueeze(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        scores = self.w_v(torch.tanh(q + k)).squeeze()  # drop the size-1 axis of w_v
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AdditivePoolsKeys(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys)
        scores = self.w_v(torch.tanh(q + k.unsqueeze(1))).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return weights @ k, weights  # the projected keys, summed


class AdditiveSumInsteadOfWv(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        scores = torch.tanh(q + k).sum(dim=-1)  # reduce the hidden features to one number
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AdditiveReLU(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        scores = self.w_v(torch.relu(q + k)).squeeze(-1)  # the MLP's usual activation
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AdditiveOutputOnly(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        weights = _masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values


# ---------------------------------------------------------------- correct variants


class AdditiveEinsum(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = torch.einsum("...qd,hd->...qh", queries, self.W_q.weight)
        k = torch.einsum("...kd,hd->...kh", keys, self.W_k.weight)
        hidden = torch.tanh(q[..., :, None, :] + k[..., None, :, :])  # (..., T_q, T_k, h)
        scores = torch.einsum("...qkh,h->...qk", hidden, self.w_v.weight[0])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return torch.einsum("...qk,...kv->...qv", weights, values), weights


class AdditiveQueryLoop(_Layers):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # once for all the queries
        outs, rows = [], []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k)
            row_mask = None
            if mask is not None:
                m = mask.expand(queries.shape[0], queries.shape[1], keys.shape[1])
                row_mask = m[:, t]
            w = _masked_softmax(scores, row_mask)
            rows.append(w)
            outs.append(torch.bmm(w.unsqueeze(1), values).squeeze(1))
        return torch.stack(outs, dim=1), torch.stack(rows, dim=1)


class AdditiveWithOptions(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        if projected_keys is None:
            projected_keys = self.W_k(keys)
        features = self.W_q(queries)[:, :, None] + projected_keys[:, None]
        scores = self.w_v(features.tanh())[..., 0]
        weights = _masked_softmax(scores, mask)
        return torch.matmul(self.dropout(weights), values), weights


CASES = [
    BlindCase(
        CHECK,
        "linear_layers_with_bias",
        AdditiveWithBiases,
        "mistake",
        "I left nn.Linear's default bias on the three layers.",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_axes_swapped",
        AdditiveUnsqueezeSwapped,
        "mistake",
        "I unsqueezed the queries at 1 and the keys at 2, so the score table is (B, T_k, T_q).",
    ),
    BlindCase(
        CHECK,
        "projections_swapped",
        AdditiveProjectionsSwapped,
        "mistake",
        "I projected the queries with W_k and the keys with W_q.",
    ),
    BlindCase(
        CHECK,
        "one_layer_on_concatenation",
        AdditiveConcatenated,
        "mistake",
        "I wrote Bahdanau's W [q; k] as one layer W on the concatenation, with no W_q and W_k.",
    ),
    BlindCase(
        CHECK,
        "scores_scaled",
        AdditiveScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as dot-product attention does.",
    ),
    BlindCase(
        CHECK,
        "mask_not_used",
        AdditiveMaskNotUsed,
        "mistake",
        "I took a plain softmax and never used the mask.",
    ),
    BlindCase(
        CHECK,
        "bare_squeeze",
        AdditiveBareSqueeze,
        "mistake",
        "I dropped w_v's size-1 axis with squeeze() and no axis, which also drops a batch or "
        "query axis of size 1.",
    ),
    BlindCase(
        CHECK,
        "pools_projected_keys",
        AdditivePoolsKeys,
        "mistake",
        "I summed the projected keys with the weights instead of the values.",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_w_v",
        AdditiveSumInsteadOfWv,
        "mistake",
        "I reduced tanh(W_q q + W_k k) with a plain sum over the hidden axis and never used w_v.",
    ),
    BlindCase(
        CHECK,
        "relu_instead_of_tanh",
        AdditiveReLU,
        "mistake",
        "I used relu as the activation of the hidden layer instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "returns_output_only",
        AdditiveOutputOnly,
        "mistake",
        "forward returns only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "einsum",
        AdditiveEinsum,
        "correct",
        "The projections, the reduction by w_v and the weighted sum all written with einsum; "
        "nan_to_num after a -inf fill for rows with no key.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AdditiveQueryLoop,
        "correct",
        "The keys projected once, then a loop over the queries, one softmax per query.",
    ),
    BlindCase(
        CHECK,
        "dropout_and_projected_keys",
        AdditiveWithOptions,
        "correct",
        "Extra dropout (default 0) and projected_keys (default None) arguments; [..., 0] "
        "instead of squeeze.",
    ),
]
