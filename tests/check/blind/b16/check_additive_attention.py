"""Blind set B16, check_additive_attention (chapter 6): additive (Bahdanau) attention as readers
write it."""

from __future__ import annotations

import math

import torch
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


class _Layers(nn.Module):
    """The three bias-free layers under the book's names; subclasses write their forward."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AddNoTanh(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        weights = _masked_softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values, weights


class AddTanhAfterWv(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
        scores = torch.tanh(self.w_v(features)).squeeze(-1)  # squash the score into (-1, 1)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddRelu(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.relu(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _masked_softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values, weights


class AddNoPairs(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries) + self.W_k(keys))  # (B, T, hidden)
        scores = self.w_v(features).squeeze(-1)  # (B, T)
        weights = _masked_softmax(scores.unsqueeze(-2), mask)  # (B, 1, T)
        return weights @ values, weights


class AddUnsqueezeSwapped(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.W_q(queries).unsqueeze(-3)  # (B, 1, T_q, hidden)
        k = self.W_k(keys).unsqueeze(-2)  # (B, T_k, 1, hidden)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddSoftmaxOverQueries(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(features).squeeze(-1)  # (B, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))
        return weights @ values, weights


class AddMaskIgnored(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = torch.softmax(self.w_v(features).squeeze(-1), dim=-1)
        return weights @ values, weights


class AddWithBiases(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _masked_softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ values, weights


class AddPoolsKeys(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        weights = _masked_softmax(self.w_v(features).squeeze(-1), mask)
        return weights @ keys, weights  # the weighted sum of the encoder states


class AddScaled(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        hidden = self.w_v.in_features
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(features).squeeze(-1) / math.sqrt(hidden)  # scaled, as in attention
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddMaskPolarity(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        features = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(features).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = padding
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q, k = self.W_q(queries), self.W_k(keys)  # (B, T_q, A), (B, T_k, A)
        features = torch.tanh(q[..., :, None, :] + k[..., None, :, :])  # (B, T_q, T_k, A)
        scores = torch.einsum("...qka,a->...qk", features, self.w_v.weight[0])
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask.any(-1, keepdim=True)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddQueryLoop(_Layers):
    """One query at a time, then stacked."""

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys)  # (B, T_k, A)
        rows = []
        for t in range(queries.shape[-2]):
            q_t = self.W_q(queries[..., t : t + 1, :])  # (B, 1, A)
            rows.append(self.w_v(torch.tanh(q_t + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=-2)  # (B, T_q, T_k)
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddWithExtras(nn.Module):
    """Dropout argument and a project_keys helper, like a fuller module."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
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
        h = self.W_q(queries)[:, :, None] + k[:, None]  # (B, T_q, T_k, A)
        h.tanh_()  # in place on our own sum
        scores = self.w_v(h)[..., 0]
        if mask is not None:
            visible = mask.expand_as(scores)
            any_key = visible.any(-1, keepdim=True)
            scores = torch.where(visible | ~any_key, scores, float("-inf"))
            weights = scores.softmax(-1) * any_key
        else:
            weights = scores.softmax(-1)
        return torch.matmul(self.dropout(weights), values), weights


CASES = [
    BlindCase(
        CHECK,
        "no_tanh",
        AddNoTanh,
        "mistake",
        "I left out the tanh: w_v(W_q q + W_k k).",
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
        "relu_instead_of_tanh",
        AddRelu,
        "mistake",
        "I used ReLU as the hidden layer's nonlinearity, as in an MLP.",
    ),
    BlindCase(
        CHECK,
        "no_pairwise_sum",
        AddNoPairs,
        "mistake",
        "I added W_q q and W_k k without unsqueezing, so query t is only scored against key t "
        "(and it fails when T_q != T_k).",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_axes_swapped",
        AddUnsqueezeSwapped,
        "mistake",
        "I unsqueezed the queries at -3 and the keys at -2, so the scores come out "
        "(B, T_k, T_q): transposed when T_q == T_k, a shape error otherwise.",
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
        "I accepted the mask argument but never applied it.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_with_bias",
        AddWithBiases,
        "mistake",
        "I kept nn.Linear's default bias=True for W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        AddPoolsKeys,
        "mistake",
        "I returned weights @ keys, the encoder states, instead of weights @ values.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_hidden",
        AddScaled,
        "mistake",
        "I divided the scores by sqrt(hidden_dim) as in scaled dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        AddMaskPolarity,
        "mistake",
        "I filled the scores where the mask is True, reading True as 'padding'.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_w_v_weight",
        AddEinsum,
        "correct",
        "einsum with w_v.weight[0] for the score and for the pooling; finfo.min fill with "
        "empty rows zeroed.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddQueryLoop,
        "correct",
        "Scores one query at a time in a Python loop, stacked into (B, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "dropout_and_projected_keys",
        AddWithExtras,
        "correct",
        "An extra dropout argument (default 0), a project_keys helper, an optional "
        "projected_keys argument, tanh_ in place on its own sum.",
    ),
]
