"""Blind set B8, check_additive_attention (chapter 6): w_v^T tanh(W_q q + W_k k) attention."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def features(self, queries: Tensor, keys: Tensor) -> Tensor:
        return self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)  # (.., T_q, T_k, h)


# ---------------------------------------------------------------- mistakes


class NoTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        weights = _msoftmax(self.w_v(self.features(queries, keys)).squeeze(-1), mask)
        return weights @ values, weights


class TanhAfterWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.w_v(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class ReluInsteadOfTanh(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.relu(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class LinearsWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # forgot bias=False
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        weights = _msoftmax(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return weights @ values, weights


class SoftmaxOverQueries(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-2))
        return weights @ values, weights


class MaskIgnored(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights


class MaskPolarityFlipped(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze(-1)
        weights = _msoftmax(scores, None if mask is None else mask == 0)
        return weights @ values, weights


class UnsqueezeSwapped(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-3) + self.W_k(keys).unsqueeze(-2)  # (.., T_k, T_q, h)
        weights = _msoftmax(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return weights @ values, weights


class SumInsteadOfWv(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = torch.tanh(self.features(queries, keys)).sum(-1)  # w_v never used
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class SqueezeAllAxes(_Base):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.features(queries, keys))).squeeze()  # every size-1 axis
        if mask is not None:
            mask = mask.squeeze()
        weights = _msoftmax(scores, mask)
        return weights @ values, weights


class KeysProjectedFromValues(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = self.W_q(queries).unsqueeze(-2) + self.W_k(values).unsqueeze(-3)
        weights = _msoftmax(self.w_v(torch.tanh(feats)).squeeze(-1), mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class EinsumScores(_Base):
    def forward(self, queries, keys, values, mask=None):
        feats = torch.tanh(self.W_q(queries)[..., :, None, :] + self.W_k(keys)[..., None, :, :])
        scores = torch.einsum("...qkh,h->...qk", feats, self.w_v.weight[0])
        weights = _msoftmax(scores, mask)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class ExpandedLoopFree(_Base):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__(query_dim, key_dim, hidden_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        B, T_q, _ = queries.shape
        T_k = keys.shape[1]
        q = self.W_q(queries).unsqueeze(2).expand(-1, -1, T_k, -1)  # (B, T_q, T_k, h)
        k = self.W_k(keys).unsqueeze(1).expand(-1, T_q, -1, -1)  # (B, T_q, T_k, h)
        scores = (torch.tanh(q + k) @ self.w_v.weight.T).squeeze(3)
        weights = _msoftmax(scores, mask)
        return torch.bmm(self.dropout(weights), values), weights


class Float64Inside(_Base):
    def forward(self, queries, keys, values, mask=None):
        dtype = queries.dtype
        q = self.W_q(queries).double().unsqueeze(-2)
        k = self.W_k(keys).double().unsqueeze(-3)
        scores = torch.tanh(q + k) @ self.w_v.weight.double().T
        weights = _msoftmax(scores.squeeze(-1), mask)
        return (weights @ values.double()).to(dtype), weights.to(dtype)


CASES = [
    BlindCase(
        CHECK, "no_tanh", NoTanh, "mistake", "I forgot the tanh: the score is w_v(W_q q + W_k k)"
    ),
    BlindCase(
        CHECK,
        "tanh_after_wv",
        TanhAfterWv,
        "mistake",
        "I put the tanh after w_v instead of before it",
    ),
    BlindCase(
        CHECK,
        "relu_instead_of_tanh",
        ReluInsteadOfTanh,
        "mistake",
        "I used ReLU as the nonlinearity instead of tanh",
    ),
    BlindCase(
        CHECK,
        "linears_with_bias",
        LinearsWithBias,
        "mistake",
        "I created the three nn.Linear layers with their default bias",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2, the queries",
    ),
    BlindCase(CHECK, "mask_ignored", MaskIgnored, "mistake", "I accepted mask but never used it"),
    BlindCase(
        CHECK,
        "mask_polarity_flipped",
        MaskPolarityFlipped,
        "mistake",
        "I passed mask == 0 to my softmax, hiding the real keys and showing the padding",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_swapped",
        UnsqueezeSwapped,
        "mistake",
        "I unsqueezed the queries at -3 and the keys at -2, so the grid is (T_k, T_q)",
    ),
    BlindCase(
        CHECK,
        "sum_instead_of_wv",
        SumInsteadOfWv,
        "mistake",
        "I summed tanh(W_q q + W_k k) over the hidden axis instead of applying w_v",
    ),
    BlindCase(
        CHECK,
        "squeeze_all_axes",
        SqueezeAllAxes,
        "mistake",
        "I used .squeeze() without an axis after w_v, which also drops a batch or query "
        "axis of size 1",
    ),
    BlindCase(
        CHECK,
        "keys_projected_from_values",
        KeysProjectedFromValues,
        "mistake",
        "I applied W_k to the values instead of the keys (the same tensor in chapter 7)",
    ),
    BlindCase(
        CHECK,
        "einsum_scores",
        EinsumScores,
        "correct",
        "broadcast with [..., :, None, :] and einsum with the w_v weight row",
    ),
    BlindCase(
        CHECK,
        "expanded_loop_free",
        ExpandedLoopFree,
        "correct",
        "explicit expand to (B, T_q, T_k, h), matmul with w_v.weight.T, bmm; dropout "
        "argument with default 0",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        Float64Inside,
        "correct",
        "scores and mixing in float64, cast back to the input dtype",
    ),
]
