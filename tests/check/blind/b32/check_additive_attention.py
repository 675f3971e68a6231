"""Blind set B32, check_additive_attention (chapter 6): additive attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The three bias-free layers under the book's names; forward differs from class to class."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (B, T_q, T_k, h)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(self.features(queries, keys)).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddReluInsteadOfTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddTanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddProjectionsWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias=True
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        weights = _msoftmax(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return weights @ values, weights


class AddSwappedUnsqueeze(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (B, T_k, T_q, h)
        scores = self.w_v(torch.tanh(feats)).squeeze(-1)  # taken as (B, T_q, T_k)
        if mask is not None:
            mask = mask.expand(*queries.shape[:-1], keys.shape[-2]).transpose(-2, -1)
        weights = _msoftmax(scores, mask).transpose(-2, -1)  # softmax over the queries
        return weights @ values, weights


class AddSwappedUnsqueezeTransposedBack(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (B, T_k, T_q, h)
        scores = self.w_v(torch.tanh(feats)).squeeze(-1).transpose(-2, -1)  # back to (T_q, T_k)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddMultiplicative(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) * self.W_k(keys).unsqueeze(-3)  # product, not sum
        weights = _msoftmax(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return weights @ values, weights


class AddSumInsteadOfWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.features(queries, keys)).sum(-1)  # add up the hidden units
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class AddScaledLikeDot(_Base):
    def forward(self, queries, keys, values, mask=None):
        hidden = self.W_q.out_features
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores / math.sqrt(hidden), mask)  # the scale from dot-product
        return weights @ values, weights


class AddSoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=1))
        return weights @ values, weights


class AddMaskMinus1e9(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = scores.softmax(-1)
        return weights @ values, weights


class AddMaskInverted(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, None if mask is None else mask.logical_not())
        return weights @ values, weights


class AddMaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = scores.softmax(-1)  # TODO: mask
        return weights @ values, weights


class AddWeightsFirst(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights, weights @ values


class AddMixesKeys(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ self.W_k(keys), weights  # the projected keys as what is mixed


class AddQueryKeyLayersSwapped(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_k(queries).unsqueeze(-2)  # W_k on the queries, W_q on the keys
        k = self.W_q(keys).unsqueeze(-3)
        weights = _msoftmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Base):
    def forward(self, queries, keys, values, mask=None):
        q = torch.einsum("bqd,hd->bqh", queries, self.W_q.weight)
        k = torch.einsum("bkd,hd->bkh", keys, self.W_k.weight)
        hidden = torch.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, T_q, T_k, h)
        scores = torch.einsum("bqkh,h->bqk", hidden, self.w_v.weight[0])
        weights = _msoftmax(scores, mask)
        return torch.einsum("bqk,bkd->bqd", weights, values), weights


class AddLoopOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h), once for all queries
        outs, rows = [], []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            s = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k)
            m = None
            if mask is not None:
                m = mask.expand(queries.shape[0], queries.shape[1], keys.shape[1])[:, t]
            w = _msoftmax(s, m)
            rows.append(w)
            outs.append((w.unsqueeze(1) @ values).squeeze(1))
        return torch.stack(outs, 1), torch.stack(rows, 1)


class AddWithOptions(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        if projected_keys is None:
            projected_keys = self.W_k(keys)
        feats = self.W_q(queries)[..., :, None, :] + projected_keys[..., None, :, :]
        scores = self.w_v(feats.tanh())[..., 0]
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0).softmax(-1).masked_fill(empty, 0)
        else:
            weights = scores.softmax(-1)
        return self.dropout(weights) @ values, weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I forgot the tanh."),
    BlindCase(
        CHECK, "relu_not_tanh", AddReluInsteadOfTanh, "mistake", "I used ReLU instead of tanh."
    ),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        AddTanhAfterWv,
        "mistake",
        "I applied tanh after w_v, to the score, instead of before it.",
    ),
    BlindCase(
        CHECK,
        "projections_with_bias",
        AddProjectionsWithBias,
        "mistake",
        "I left W_q and W_k with nn.Linear's default bias.",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_swapped",
        AddSwappedUnsqueeze,
        "mistake",
        "I unsqueezed the queries at -3 and the keys at -2, so the scores are (T_k, T_q) and "
        "the softmax runs over the queries; I transposed only the weights at the end.",
    ),
    BlindCase(
        CHECK,
        "multiplicative",
        AddMultiplicative,
        "mistake",
        "I multiplied W_q q and W_k k instead of adding them.",
    ),
    BlindCase(
        CHECK,
        "sum_not_wv",
        AddSumInsteadOfWv,
        "mistake",
        "I summed the tanh features over the hidden axis instead of applying w_v.",
    ),
    BlindCase(
        CHECK,
        "scaled_like_dot_product",
        AddScaledLikeDot,
        "mistake",
        "I divided the additive scores by sqrt(hidden_dim), as in scaled dot-product attention.",
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
        "fill_minus_1e9",
        AddMaskMinus1e9,
        "mistake",
        "I filled the masked scores with -1e9, so an all-masked query spreads its weight.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        AddMaskInverted,
        "mistake",
        "I inverted the mask (True = hidden).",
    ),
    BlindCase(CHECK, "mask_ignored", AddMaskIgnored, "mistake", "I never applied the mask."),
    BlindCase(
        CHECK,
        "weights_first",
        AddWeightsFirst,
        "mistake",
        "I returned (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "mixes_projected_keys",
        AddMixesKeys,
        "mistake",
        "I took the weighted sum of the projected keys W_k k instead of the values.",
    ),
    BlindCase(
        CHECK,
        "layers_swapped",
        AddQueryKeyLayersSwapped,
        "mistake",
        "I applied W_k to the queries and W_q to the keys (fails or is wrong when the sizes "
        "differ).",
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
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "Keys projected once, then a loop over the queries, one row of weights at a time.",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_other_way_transposed_back",
        AddSwappedUnsqueezeTransposedBack,
        "correct",
        "Queries unsqueezed at -3 and keys at -2, giving (T_k, T_q) scores, transposed back "
        "before the softmax.",
    ),
    BlindCase(
        CHECK,
        "with_dropout_and_projected_keys",
        AddWithOptions,
        "correct",
        "Extra dropout (default 0) and projected_keys arguments, as the book's class has.",
    ),
]
