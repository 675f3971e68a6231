"""Blind set B6, check_additive_attention (chapter 6): w_v^T tanh(W_q q + W_k k) by readers."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Layers(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AdditiveNoTanh(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        scores = self.w_v(features).squeeze(-1)  # linear is enough, softmax is nonlinear
        weights = _softmax(scores, mask)
        return weights @ values, weights


class AdditiveTanhAfterWv(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        scores = torch.tanh(self.w_v(features)).squeeze(-1)
        weights = _softmax(scores, mask)
        return weights @ values, weights


class AdditiveWithBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # default nn.Linear, with a bias
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values, weights


class AdditiveSoftmaxOverQueries(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (B, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(F.softmax(scores, dim=1))
        return torch.bmm(weights, values), weights


class AdditiveSqueezeAll(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze()  # drop the trailing 1
        weights = _softmax(scores, mask)
        return weights @ values, weights


class AdditiveNoPairs(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries) + self.W_k(keys))  # query i with key i
        scores = self.w_v(features).transpose(1, 2)  # (B, 1, T_k)
        weights = _softmax(scores, mask)
        return weights @ values, weights.expand(-1, queries.shape[1], -1)


class AdditiveMaskIgnored(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = torch.softmax(self.w_v(features).squeeze(-1), dim=-1)
        return weights @ values, weights


class AdditiveMaskPolarity(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is True
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return weights @ values, weights


class AdditiveScaled(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(features).squeeze(-1) / math.sqrt(self.w_v.in_features)  # as in ch. 6
        weights = _softmax(scores, mask)
        return weights @ values, weights


class AdditiveOutputOnly(_Layers):
    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values  # the weights are only for plots


class AdditivePaperNames(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_a = nn.Linear(query_dim, hidden_dim, bias=False)  # Bahdanau et al.'s names
        self.U_a = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v_a = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        features = torch.tanh(self.W_a(queries).unsqueeze(2) + self.U_a(keys).unsqueeze(1))
        weights = _softmax(self.v_a(features).squeeze(-1), mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AdditiveEinsum(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.W_q(queries)[..., :, None, :]  # (B, T_q, 1, h)
        k = self.W_k(keys)[..., None, :, :]  # (B, 1, T_k, h)
        scores = torch.einsum("...qkh,h->...qk", torch.tanh(q + k), self.w_v.weight[0])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            seen = mask.any(-1, keepdim=True)
            weights = scores.masked_fill(~seen, 0.0).softmax(-1).masked_fill(~seen, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AdditiveQueryLoop(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys)  # (B, T_k, h), the same for every query
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t : t + 1])  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        weights = _softmax(scores, None if mask is None else mask.expand_as(scores))
        return torch.bmm(weights, values), weights


class AdditiveWithDropout(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(features).squeeze(-1)
        weights = _softmax(scores, mask)
        return self.dropout(weights) @ values, weights


class AdditiveKeysFirst(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(1) + self.W_k(keys).unsqueeze(2))
        scores = self.w_v(features).squeeze(-1)  # (B, T_k, T_q): row i is key i
        weights = _softmax(scores.transpose(1, 2), mask)
        return weights @ values, weights


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        AdditiveNoTanh,
        "mistake",
        "I left out the tanh: the score is w_v(W_q q + W_k k).",
    ),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AdditiveTanhAfterWv,
        "mistake",
        "I put the tanh after w_v, tanh(w_v(W_q q + W_k k)), instead of between.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_with_bias",
        AdditiveWithBiases,
        "mistake",
        "I kept nn.Linear's default bias in all three layers, though they should have none.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AdditiveSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1 of the (B, T_q, T_k) scores, the queries.",
    ),
    BlindCase(
        CHECK,
        "squeeze_without_axis",
        AdditiveSqueezeAll,
        "mistake",
        "I removed w_v's trailing axis with squeeze() instead of squeeze(-1), which also drops "
        "the batch or query axis when it has size 1.",
    ),
    BlindCase(
        CHECK,
        "no_pairwise_broadcast",
        AdditiveNoPairs,
        "mistake",
        "I added W_q(queries) + W_k(keys) without unsqueezing, so query i is only compared with "
        "key i, not with every key.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        AdditiveMaskIgnored,
        "mistake",
        "I accept a mask but never use it.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity_flipped",
        AdditiveMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True, so the real keys are hidden and padding is seen.",
    ),
    BlindCase(
        CHECK,
        "scaled_like_dot_product",
        AdditiveScaled,
        "mistake",
        "I divided the additive scores by sqrt(hidden_dim), as for dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "returns_output_only",
        AdditiveOutputOnly,
        "mistake",
        "My forward returns only the output, not (output, weights).",
    ),
    BlindCase(
        CHECK,
        "paper_layer_names",
        AdditivePaperNames,
        "mistake",
        "I named the layers W_a, U_a and v_a as in Bahdanau et al. instead of W_q, W_k, w_v.",
    ),
    BlindCase(
        CHECK,
        "einsum_scores",
        AdditiveEinsum,
        "correct",
        "The score as an einsum of tanh(q + k) with w_v's weight row; the same for the output.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AdditiveQueryLoop,
        "correct",
        "The keys projected once, then one query at a time scored against all keys and stacked.",
    ),
    BlindCase(
        CHECK,
        "with_dropout_option",
        AdditiveWithDropout,
        "correct",
        "An extra dropout argument (default 0) applied to the weights before the values.",
    ),
    BlindCase(
        CHECK,
        "keys_first_then_transposed",
        AdditiveKeysFirst,
        "correct",
        "I broadcast to (B, T_k, T_q) (keys on the rows) and transpose the scores to "
        "(B, T_q, T_k) before the softmax.",
    ),
]
