"""Blind cases for check_self_attention (chapter 8), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_self_attention"


class _Base(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def _qkv(self, x):
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


# ---- mistakes -------------------------------------------------------------------------------


class NotScaled(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1), mask)
        return w @ v, w


class DividedByDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / q.shape[-1], mask)
        return w @ v, w


class OneMatrixForQueriesAndKeys(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # the same projection twice
        v = x @ self.W_v
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SoftmaxOverQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=1)
        return w @ v, w


class WeightsTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w.transpose(1, 2)  # so that column = query, as in the figure


class ValuesMixedByColumns(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w.transpose(-2, -1) @ v, w


class MaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class MaskInverted(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return w @ v, w


class ScaledByInputSize(_Base):
    def forward(self, x, mask=None):
        q, k, v = self._qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return w @ v, w


# ---- reader's slip ------------------------------------------------------------------------------


class NoValueSize(nn.Module):
    def __init__(self, d_in: int, d_k: int) -> None:  # no d_v parameter
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


# ---- correct variants ---------------------------------------------------------------------------


class LinearLayers(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(k.shape[-1])
        weights = masked_softmax(scores, mask)
        return torch.bmm(weights, v), weights


class EinsumOwnMask(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) * k.shape[-1] ** -0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)  # every query sees at least one key here
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class ScaleFoldedIntoQueries(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        q = torch.matmul(x, self.W_q / math.sqrt(d_k))
        k, v = torch.matmul(x, self.W_k), torch.matmul(x, self.W_v)
        weights = masked_softmax(q @ k.mT, mask)
        return weights @ v, weights


CASES = [
    BlindCase(
        CHECK, "not_scaled", NotScaled, "mistake", "I forgot to divide the scores by sqrt(d_k)"
    ),
    BlindCase(
        CHECK,
        "divided_by_dk",
        DividedByDk,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "one_matrix_for_queries_and_keys",
        OneMatrixForQueriesAndKeys,
        "mistake",
        "I projected the keys with W_q too, a copy-paste slip",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim 1, the queries",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        WeightsTransposed,
        "mistake",
        "I returned the weights transposed, column = query",
    ),
    BlindCase(
        CHECK,
        "values_mixed_by_columns",
        ValuesMixedByColumns,
        "mistake",
        "I multiplied the values by the transposed weights, so each output mixes by columns",
    ),
    BlindCase(
        CHECK, "mask_ignored", MaskIgnored, "mistake", "I took a plain softmax and ignored the mask"
    ),
    BlindCase(
        CHECK, "mask_inverted", MaskInverted, "mistake", "I filled -inf where the mask is True"
    ),
    BlindCase(
        CHECK,
        "scaled_by_input_size",
        ScaledByInputSize,
        "mistake",
        "I divided by sqrt of d_in, the input size, instead of d_k",
    ),
    BlindCase(
        CHECK,
        "no_value_size",
        NoValueSize,
        "mistake",
        "my constructor has no d_v parameter, so it only takes (d_in, d_k)",
    ),
    BlindCase(
        CHECK,
        "linear_layers",
        LinearLayers,
        "correct",
        "I used three bias-free nn.Linear layers and torch.bmm",
    ),
    BlindCase(
        CHECK,
        "einsum_own_mask",
        EinsumOwnMask,
        "correct",
        "I wrote every product with einsum and filled masked scores with -inf myself",
    ),
    BlindCase(
        CHECK,
        "scale_folded_into_queries",
        ScaleFoldedIntoQueries,
        "correct",
        "I divided W_q by sqrt(d_k) before projecting, so the scores come out already scaled",
    ),
]
