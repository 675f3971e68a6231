"""Blind cases for check_self_attention (chapter 8), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import nn

from transformer_tutorial.attention import attention, masked_softmax

from .. import BlindCase

CHECK = "check_self_attention"


class _Params(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.d_k = d_k
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def qkv(self, x):
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


class NotScaled(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = masked_softmax(q @ k.transpose(-2, -1), mask)
        return weights @ v, weights


class DividedByDk(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = masked_softmax(q @ k.transpose(-2, -1) / self.d_k, mask)
        return weights @ v, weights


class ScaledByInputSize(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # sqrt(d_in)
        weights = masked_softmax(scores, mask)
        return weights @ v, weights


class QueryMatrixForKeys(_Params):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # the same projection for keys
        v = x @ self.W_v
        return attention(q, k, v, mask)


class SoftmaxOverQueries(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ v, weights


class KeysTimesQueries(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = k @ q.transpose(-2, -1) / math.sqrt(self.d_k)  # K Q^T
        weights = masked_softmax(scores, mask)
        return weights @ v, weights


class WeightsReturnedTransposed(_Params):
    def forward(self, x, mask=None):
        out, weights = attention(*self.qkv(x), mask)
        return out, weights.transpose(1, 2)  # (B, keys, queries), like the notes' picture


class MaskIgnored(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), dim=-1)
        return weights @ v, weights


class MaskTrueMeansHidden(_Params):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class ValuesSizedLikeKeys(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))  # d_v forgotten

    def forward(self, x, mask=None):
        return attention(x @ self.W_q, x @ self.W_k, x @ self.W_v, mask)


class LinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x, mask=None):
        return attention(self.W_q(x), self.W_k(x), self.W_v(x), mask)


class BiasFreeLinear(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x, mask=None):
        return attention(self.W_q(x), self.W_k(x), self.W_v(x), mask)


class EinsumLayer(_Params):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,btk->bqt", q, k) / self.d_k**0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return torch.einsum("bqt,btv->bqv", weights, v), weights


class ScaledQueries(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0):
        super().__init__()
        if d_v is None:
            d_v = d_k
        self.scale = d_k**-0.5
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, d_v))
        for W in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(W)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        q = torch.matmul(x, self.W_q) * self.scale
        k = torch.matmul(x, self.W_k)
        weights = masked_softmax(q @ k.mT, mask)
        return self.dropout(weights) @ torch.matmul(x, self.W_v), weights


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
        "scaled_by_input_size",
        ScaledByInputSize,
        "mistake",
        "I divided by sqrt(x.shape[-1]), the input size d_in, instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "query_matrix_for_keys",
        QueryMatrixForKeys,
        "mistake",
        "I projected the keys with W_q too (copy-paste), so W_k is never used",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries, instead of the keys",
    ),
    BlindCase(
        CHECK,
        "keys_times_queries",
        KeysTimesQueries,
        "mistake",
        "I computed the scores as K Q^T instead of Q K^T, so rows are keys",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        WeightsReturnedTransposed,
        "mistake",
        "the output is right but I returned the weights transposed, (B, key, query)",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        MaskIgnored,
        "mistake",
        "I never used the mask argument",
    ),
    BlindCase(
        CHECK,
        "mask_true_means_hidden",
        MaskTrueMeansHidden,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'hidden' (opposite polarity)",
    ),
    BlindCase(
        CHECK,
        "values_sized_like_keys",
        ValuesSizedLikeKeys,
        "mistake",
        "I made W_v (d_in, d_k) and never used d_v, so the output has d_k columns",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        LinearWithBias,
        "mistake",
        "I used nn.Linear layers but left their default bias=True",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear",
        BiasFreeLinear,
        "correct",
        "three nn.Linear layers with bias=False instead of nn.Parameter matrices",
    ),
    BlindCase(
        CHECK,
        "einsum_layer",
        EinsumLayer,
        "correct",
        "every product written with einsum, the mask with masked_fill(-inf)",
    ),
    BlindCase(
        CHECK,
        "scaled_queries",
        ScaledQueries,
        "correct",
        "I scaled q by d_k ** -0.5 before the product, initialised with xavier_uniform_, and "
        "added an optional dropout (0 by default)",
    ),
]
