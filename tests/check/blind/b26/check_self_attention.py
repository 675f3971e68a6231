"""Blind set B26, check_self_attention (chapter 8): single-head self-attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Matrices(nn.Module):
    """The three matrices as the skeleton describes them."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SelfAttnValuesSizedDk(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k))  # values as wide as the keys

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnDvDefaultsToDin(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_v or d_in  # the output keeps the input's width
        self.W_q = nn.Parameter(torch.randn(d_in, d_k))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnLinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnScaleDin(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        d = x.shape[-1]  # the width of the vectors
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d), mask)
        return weights @ v, weights


class SelfAttnLinearLayout(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_k, d_in))  # (out, in), as nn.Linear stores it
        self.W_k = nn.Parameter(torch.randn(d_k, d_in))
        self.W_v = nn.Parameter(torch.randn(d_v, d_in))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q.T, x @ self.W_k.T, x @ self.W_v.T
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnMixesInputs(_Matrices):
    def forward(self, x, mask=None):
        q, k = x @ self.W_q, x @ self.W_k
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # a mix of the input vectors


class SelfAttnPlainTensors(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = torch.randn(d_in, d_k) / math.sqrt(d_in)  # three matrices
        self.W_k = torch.randn(d_in, d_k) / math.sqrt(d_in)
        self.W_v = torch.randn(d_in, d_v) / math.sqrt(d_in)

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnOutputOnly(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v


class SelfAttnNaNRows(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SelfAttnValuesFromKeys(_Matrices):
    def forward(self, x, mask=None):
        q, k = x @ self.W_q, x @ self.W_k
        v = k  # the keys carry the content too
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnScaleOutput(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
        return weights @ v / math.sqrt(q.shape[-1]), weights  # the scale at the end


# ---------------------------------------------------------------- correct variants


class SelfAttnBiasFreeLinear(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.d_k = d_k
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / self.d_k**0.5
        weights = _masked_softmax(scores, mask)
        return torch.bmm(weights, v), weights


class SelfAttnEinsum(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) / math.sqrt(self.W_q.shape[1])
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        weights = scores.softmax(-1).nan_to_num(0.0)
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class SelfAttnStackedQK(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.empty(d_in, d_k).normal_(0, d_in**-0.5))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k).normal_(0, d_in**-0.5))
        self.W_v = nn.Parameter(torch.empty(d_in, d_v).normal_(0, d_in**-0.5))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        qkv = x @ torch.cat([self.W_q * d_k**-0.5, self.W_k, self.W_v], dim=1)  # one product
        q, k, v = qkv.split([d_k, d_k, self.W_v.shape[1]], dim=-1)
        weights = _masked_softmax(q @ k.mT, mask)
        return self.dropout(weights) @ v, weights


CASES = [
    BlindCase(
        CHECK,
        "values_sized_dk",
        SelfAttnValuesSizedDk,
        "mistake",
        "I made W_v (d_in, d_k) like the other two and ignored d_v.",
    ),
    BlindCase(
        CHECK,
        "dv_defaults_to_din",
        SelfAttnDvDefaultsToDin,
        "mistake",
        "When d_v is None I gave the values the input's width d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        SelfAttnLinearWithBias,
        "mistake",
        "I used nn.Linear layers but left their bias on.",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SelfAttnScaleDin,
        "mistake",
        "I divided the scores by sqrt of the input width d_in instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "matrices_stored_out_in",
        SelfAttnLinearLayout,
        "mistake",
        "I stored each matrix as (d_out, d_in), like nn.Linear's weight, and multiplied by its "
        "transpose.",
    ),
    BlindCase(
        CHECK,
        "mixes_inputs_not_values",
        SelfAttnMixesInputs,
        "mistake",
        "I multiplied the weights by x instead of by V = x W_v.",
    ),
    BlindCase(
        CHECK,
        "plain_tensors_not_parameters",
        SelfAttnPlainTensors,
        "mistake",
        "I stored the three matrices as plain tensors, not nn.Parameter.",
    ),
    BlindCase(
        CHECK,
        "returns_output_only",
        SelfAttnOutputOnly,
        "mistake",
        "forward returns only the output, not the weights.",
    ),
    BlindCase(
        CHECK,
        "nan_for_query_without_key",
        SelfAttnNaNRows,
        "mistake",
        "I filled masked scores with -inf and took the softmax, so a query that sees no key "
        "gives NaN.",
    ),
    BlindCase(
        CHECK,
        "values_are_keys",
        SelfAttnValuesFromKeys,
        "mistake",
        "I used K as the values too and never multiplied by W_v.",
    ),
    BlindCase(
        CHECK,
        "scale_applied_to_output",
        SelfAttnScaleOutput,
        "mistake",
        "I divided the output by sqrt(d_k) instead of the scores.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_bmm",
        SelfAttnBiasFreeLinear,
        "correct",
        "Three bias-free nn.Linear layers and torch.bmm for both products.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        SelfAttnEinsum,
        "correct",
        "Every product written with einsum; nan_to_num after the -inf fill.",
    ),
    BlindCase(
        CHECK,
        "one_concatenated_projection",
        SelfAttnStackedQK,
        "correct",
        "One product with the three matrices concatenated (the scale folded into W_q), then "
        "split; an extra dropout argument defaults to 0.",
    ),
]
