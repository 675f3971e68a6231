"""Blind set B33, check_self_attention (chapter 8): the single-head self-attention layer as
readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


class _Base(nn.Module):
    """The three matrices as the docstring asks; each mistake overrides only forward."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


# ---------------------------------------------------------------- mistakes


class SANoScale(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2), mask)
        return weights @ v, weights


class SADivideByDk(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / q.shape[-1], mask)
        return weights @ v, weights


class SAScaleByDin(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAOneMatrixForQK(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = x @ self.W_q
        k = x @ self.W_q  # queries and keys live in the same space
        v = x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ v, weights


class SAWeightsTransposed(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # (key, query) for the heat map


class SAMaskIgnored(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SAMaskPolarity(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # fill the masked positions
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SAValuesAreInputs(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # mix the word vectors themselves


class SAValuesFromWk(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        v = x @ self.W_k  # copy-pasted line
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAMaskAfterSoftmax(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            weights = weights * mask  # hidden keys weigh nothing
        return weights @ v, weights


class SAReturnsOutOnly(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v


class SATransposeBatchAxis(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(0, 1) / math.sqrt(q.shape[-1])  # K^T
        weights = _softmax(scores, mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    """Bias-free nn.Linear layers for the three projections (the check accepts them)."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(k.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        return torch.bmm(weights, v), weights


class SAEinsum(_Base):
    """einsum for the projections and both products."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) * q.shape[-1] ** -0.5
        if mask is not None:
            scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
        weights = torch.softmax(scores, dim=-1)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAFillMinus1e9(nn.Module):
    """Xavier-initialised matrices and a -1e9 fill, which the chapter says is fine when every
    query sees at least one key."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.d_k = d_k
        self.W_q = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_k)))
        self.W_k = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_k)))
        self.W_v = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_v or d_k)))

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        Q, K, V = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = Q @ K.mT / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        A = torch.softmax(scores, dim=-1)
        return A @ V, A


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK,
        "divide_by_dk",
        SADivideByDk,
        "mistake",
        "I divided the scores by d_k instead of its square root.",
    ),
    BlindCase(
        CHECK,
        "scale_by_din",
        SAScaleByDin,
        "mistake",
        "I scaled by sqrt of x's last dimension, d_in, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "one_matrix_for_qk",
        SAOneMatrixForQK,
        "mistake",
        "I used W_q for both the queries and the keys.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1 of the (B, T, T) scores.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I return the weights transposed, keys on the rows, for my heat map.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "I never used the mask argument.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        SAMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True.",
    ),
    BlindCase(
        CHECK,
        "values_are_inputs",
        SAValuesAreInputs,
        "mistake",
        "I mixed the input vectors x with the weights instead of V = x W_v.",
    ),
    BlindCase(
        CHECK,
        "values_from_wk",
        SAValuesFromWk,
        "mistake",
        "I computed V with W_k by a copy-paste slip.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        SAMaskAfterSoftmax,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        SAReturnsOutOnly,
        "mistake",
        "My forward returns only the output, not the weights.",
    ),
    BlindCase(
        CHECK,
        "transpose_batch_axis",
        SATransposeBatchAxis,
        "mistake",
        "I wrote K^T as k.transpose(0, 1).",
    ),
    BlindCase(
        CHECK,
        "linear_layers",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v, bmm for the products.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        SAEinsum,
        "correct",
        "einsum for the projections and the two products; torch.where for the mask.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        SAFillMinus1e9,
        "correct",
        "Xavier-initialised matrices, masked scores filled with -1e9 (every query sees a key).",
    ),
]
