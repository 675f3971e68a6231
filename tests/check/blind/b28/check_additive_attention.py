"""Blind set B28, check_additive_attention (chapter 6): additive (Bahdanau) attention as readers
write it."""

from __future__ import annotations

import math

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


class _Layers(nn.Module):
    """W_q, W_k and w_v, bias-free, as the docstring asks."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)


# ---------------------------------------------------------------- mistakes


class AddWithBias(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim)  # nn.Linear's defaults
        self.W_k = nn.Linear(key_dim, hidden_dim)
        self.w_v = nn.Linear(hidden_dim, 1)

    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(h).squeeze(-1), mask)
        return weights @ values, weights


class AddNoSqueeze(_Layers):
    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(h)  # (B, T_q, T_k, 1)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask.unsqueeze(-1)
        return (weights * values.unsqueeze(1)).sum(2), weights.squeeze(-1)


class AddBroadcastSwapped(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(1)  # (B, 1, T_q, h)
        k = self.W_k(keys).unsqueeze(2)  # (B, T_k, 1, h)
        scores = self.w_v(torch.tanh(q + k)).squeeze(-1)  # (B, T_k, T_q)
        weights = _masked_softmax(scores.transpose(1, 2), mask)
        return weights @ values, weights.transpose(1, 2)  # keys first, like the scores


class AddProjectionsSwapped(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_k(queries).unsqueeze(2)  # mixed up which projection is which
        k = self.W_q(keys).unsqueeze(1)
        weights = _masked_softmax(self.w_v(torch.tanh(q + k)).squeeze(-1), mask)
        return weights @ values, weights


class AddProductInside(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries).unsqueeze(2)
        k = self.W_k(keys).unsqueeze(1)
        weights = _masked_softmax(self.w_v(torch.tanh(q * k)).squeeze(-1), mask)
        return weights @ values, weights


class AddReluNotTanh(_Layers):
    def forward(self, queries, keys, values, mask=None):
        hidden = F.relu(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(hidden).squeeze(-1), mask)
        return weights @ values, weights


class AddScaledLikeDot(_Layers):
    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = self.w_v(h).squeeze(-1) / math.sqrt(h.shape[-1])  # keep the variance at 1
        weights = _masked_softmax(scores, mask)
        return weights @ values, weights


class AddMaskIgnored(_Layers):
    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = torch.softmax(self.w_v(h).squeeze(-1), dim=-1)  # TODO: mask
        return weights @ values, weights


class AddWeightsOnKeys(_Layers):
    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(h).squeeze(-1), mask)
        return weights @ self.W_k(keys), weights  # the projected keys carry the content


class AddDropoutDefault(nn.Module):
    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(0.1)  # as in the book's module

    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        weights = _masked_softmax(self.w_v(h).squeeze(-1), mask)
        return self.dropout(weights) @ values, weights


class AddMaskTrueBlocks(_Layers):
    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(
            torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        ).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # hide where the mask is set
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return weights @ values, weights


class AddSoftmaxOverQueries(_Layers):
    def forward(self, queries, keys, values, mask=None):
        h = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(h).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 1 after the batch
        return weights @ values, weights


# ---------------------------------------------------------------- correct variants


class AddLoopOverQueries(_Layers):
    def forward(self, queries, keys, values, mask=None):
        k = self.W_k(keys)  # (B, T_k, h), once for every query
        outs, rows = [], []
        for i in range(queries.shape[-2]):
            q = self.W_q(queries[..., i : i + 1, :])  # (B, 1, h)
            s = self.w_v(torch.tanh(q + k)).squeeze(-1).unsqueeze(-2)  # (B, 1, T_k)
            m = mask
            if mask is not None and mask.dim() >= 2 and mask.shape[-2] > 1:
                m = mask[..., i : i + 1, :]
            w = _masked_softmax(s, m)
            rows.append(w)
            outs.append(w @ values)
        return torch.cat(outs, dim=-2), torch.cat(rows, dim=-2)


class AddEinsum(_Layers):
    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries)[..., :, None, :] + self.W_k(keys)[..., None, :, :])
        scores = torch.einsum("...qkh,h->...qk", hidden, self.w_v.weight[0])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = ~mask.any(-1, keepdim=True)
            weights = scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("...qk,...kd->...qd", weights, values), weights


class AddWithOptions(nn.Module):
    """Extra dropout and projected_keys arguments with defaults, as the book's module has."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None, projected_keys=None):
        if projected_keys is None:
            projected_keys = self.W_k(keys)
        feats = torch.tanh(self.W_q(queries).unsqueeze(-2) + projected_keys.unsqueeze(-3))
        scores = self.w_v(feats).squeeze(-1)
        weights = _masked_softmax(scores, mask)
        return torch.matmul(self.dropout(weights), values), weights


class AddFunctional(_Layers):
    def forward(self, queries, keys, values, mask=None):
        q = F.linear(queries, self.W_q.weight)  # (B, T_q, h)
        k = F.linear(keys, self.W_k.weight)  # (B, T_k, h)
        B, T_q, T_k = q.shape[0], q.shape[1], k.shape[1]
        pair = q[:, :, None, :].expand(B, T_q, T_k, -1) + k[:, None, :, :]
        scores = (pair.tanh() @ self.w_v.weight.T)[..., 0]  # (B, T_q, T_k)
        if mask is not None:
            visible = mask.expand(B, T_q, T_k)
            exp = torch.where(visible, (scores - scores.amax(-1, keepdim=True)).exp(), 0.0)
            total = exp.sum(-1, keepdim=True)
            weights = exp / torch.where(total > 0, total, torch.ones_like(total))
        else:
            weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, values), weights


CASES = [
    BlindCase(
        CHECK,
        "linears_with_bias",
        AddWithBias,
        "mistake",
        "I kept nn.Linear's default bias=True for W_q, W_k and w_v.",
    ),
    BlindCase(
        CHECK,
        "score_not_squeezed",
        AddNoSqueeze,
        "mistake",
        "I did not squeeze w_v's last axis of size 1, so the softmax runs over that axis.",
    ),
    BlindCase(
        CHECK,
        "broadcast_axes_swapped",
        AddBroadcastSwapped,
        "mistake",
        "I gave the queries the axis 1 and the keys the axis 2, so my score tensor is "
        "(B, T_k, T_q) and the weights come back keys first.",
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
        "product_inside_tanh",
        AddProductInside,
        "mistake",
        "I multiplied W_q q and W_k k inside the tanh instead of adding them.",
    ),
    BlindCase(
        CHECK,
        "relu_not_tanh",
        AddReluNotTanh,
        "mistake",
        "I used a ReLU in the hidden layer instead of tanh.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_hidden",
        AddScaledLikeDot,
        "mistake",
        "I divided the scores by sqrt(hidden_dim), as for dot-product attention.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        AddMaskIgnored,
        "mistake",
        "I took a plain softmax and never used the mask argument.",
    ),
    BlindCase(
        CHECK,
        "weights_times_projected_keys",
        AddWeightsOnKeys,
        "mistake",
        "I multiplied the weights by the projected keys W_k k instead of the values.",
    ),
    BlindCase(
        CHECK,
        "dropout_on_by_default",
        AddDropoutDefault,
        "mistake",
        "I put nn.Dropout(0.1) on the weights like the book's module, with no way to turn it "
        "off, so in training mode the output is random.",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        AddMaskTrueBlocks,
        "mistake",
        "I filled -inf where the mask is True, as nn.MultiheadAttention reads it.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        AddSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, which for (B, T_q, T_k) is the queries.",
    ),
    BlindCase(
        CHECK,
        "loop_over_queries",
        AddLoopOverQueries,
        "correct",
        "The keys projected once, then one query at a time in a loop.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_w_v_row",
        AddEinsum,
        "correct",
        "einsum with the row of w_v's weight for the score, and einsum for the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "dropout_and_projected_keys_options",
        AddWithOptions,
        "correct",
        "Extra dropout (default 0) and projected_keys (default None) arguments, as the book's "
        "module has.",
    ),
    BlindCase(
        CHECK,
        "functional_with_where",
        AddFunctional,
        "correct",
        "F.linear on the layers' weights, an explicit expand, and the masked softmax written "
        "with torch.where and exp.",
    ),
]
