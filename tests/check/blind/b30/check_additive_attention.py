"""Blind set B30, check_additive_attention (chapter 6): w_v^T tanh(W_q q + W_k k) attention, as
readers write the module."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_additive_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Layers(nn.Module):
    """The three layers as the docstring asks; the mistakes below change forward only."""

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
        feats = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddTanhAfterWv(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        weights = _masked_softmax(torch.tanh(self.w_v(feats)).squeeze(-1), mask)
        return weights @ values, weights


class AddReLU(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.relu(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's default bias kept
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddKeysOnRows(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_q(queries).unsqueeze(1) + self.W_k(keys).unsqueeze(2))
        scores = self.w_v(feats).squeeze(-1)  # (B, T_k, T_q)
        weights = _masked_softmax(scores.transpose(1, 2), mask)
        return weights @ values, weights.transpose(1, 2)


class AddProjectionsSwapped(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_k(queries).unsqueeze(2) + self.W_q(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddMaskIgnored(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = torch.softmax(self.w_v(feats).squeeze(-1), dim=-1)
        return weights @ values, weights


class AddMaskInverted(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(feats).squeeze(-1)
        weights = _masked_softmax(scores, None if mask is None else mask == 0)
        return weights @ values, weights


class AddSumsKeys(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ self.W_k(keys), weights


class AddProduct(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) * self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


class AddSoftmaxOverSizeOne(_Layers):
    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(feats)  # (B, T_q, T_k, 1)
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-1), float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1)).squeeze(-1)
        return weights @ values, weights


class AddArgsReordered(_Layers):
    def __init__(self, key_dim: int, query_dim: int, hidden_dim: int) -> None:
        super().__init__(query_dim, key_dim, hidden_dim)

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        feats = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(feats).squeeze(-1), mask)
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddEinsum(_Layers):
    """Scores with einsum on the three weight matrices; -inf fill with an empty-row guard."""

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
            empty = torch.isneginf(scores).all(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqk,bkv->bqv", weights, values), weights


class AddLoopOverQueries(_Layers):
    """One query at a time, stacked."""

    def forward(
        self, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys)  # (B, T_k, h)
        rows = []
        for t in range(queries.shape[1]):
            q = self.W_q(queries[:, t]).unsqueeze(1)  # (B, 1, h)
            rows.append(self.w_v(torch.tanh(q + k)).squeeze(-1))  # (B, T_k)
        scores = torch.stack(rows, dim=1)  # (B, T_q, T_k)
        weights = _masked_softmax(scores, None if mask is None else mask.expand_as(scores))
        return torch.bmm(weights, values), weights


class AddWithOptions(nn.Module):
    """Extra dropout and projected_keys arguments with harmless defaults."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(
        self,
        queries: Tensor,
        keys: Tensor,
        values: Tensor,
        mask: Tensor | None = None,
        projected_keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        k = self.W_k(keys) if projected_keys is None else projected_keys
        scores = self.w_v(torch.tanh(self.W_q(queries)[..., :, None, :] + k[..., None, :, :]))
        weights = _masked_softmax(scores[..., 0], mask)
        return self.drop(weights) @ values, weights


CASES = [
    BlindCase(CHECK, "no_tanh", AddNoTanh, "mistake", "I left out the tanh."),
    BlindCase(
        CHECK,
        "tanh_after_w_v",
        AddTanhAfterWv,
        "mistake",
        "I put the tanh after w_v, on the score, instead of inside it.",
    ),
    BlindCase(
        CHECK,
        "relu_instead_of_tanh",
        AddReLU,
        "mistake",
        "I used ReLU as the nonlinearity of the hidden layer.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_with_bias",
        AddWithBias,
        "mistake",
        "I kept nn.Linear's default bias=True on W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "broadcast_the_wrong_way",
        AddKeysOnRows,
        "mistake",
        "I put the keys on the rows and the queries on the columns when broadcasting, "
        "transposed to softmax, and returned the weights in that (T_k, T_q) layout.",
    ),
    BlindCase(
        CHECK,
        "projections_swapped",
        AddProjectionsSwapped,
        "mistake",
        "I applied W_k to the queries and W_q to the keys.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        AddMaskIgnored,
        "mistake",
        "I accepted mask but took a plain softmax.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        AddMaskInverted,
        "mistake",
        "I passed mask == 0 as the positions that may attend.",
    ),
    BlindCase(
        CHECK,
        "projected_keys_as_values",
        AddSumsKeys,
        "mistake",
        "I summed the projected keys W_k k with the weights instead of the values.",
    ),
    BlindCase(
        CHECK,
        "projections_multiplied",
        AddProduct,
        "mistake",
        "I multiplied W_q q and W_k k instead of adding them.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_size_one_axis",
        AddSoftmaxOverSizeOne,
        "mistake",
        "I forgot to squeeze w_v's output before the softmax, so it runs over an axis of size "
        "1 and every weight is 1.",
    ),
    BlindCase(
        CHECK,
        "constructor_key_dim_first",
        AddArgsReordered,
        "mistake",
        "My __init__ takes (key_dim, query_dim, hidden_dim).",
    ),
    BlindCase(
        CHECK,
        "einsum_on_weights",
        AddEinsum,
        "correct",
        "einsum with the three weight matrices; -inf fill with a guard for empty rows.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "The scores built one query at a time and stacked; bmm with the values.",
    ),
    BlindCase(
        CHECK,
        "dropout_and_projected_keys",
        AddWithOptions,
        "correct",
        "Optional dropout (default 0) and projected_keys arguments, as in chapter 7.",
    ),
]
