"""Blind set B9, check_self_attention (chapter 8): single-head self-attention."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _safe_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    empty = ~mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)


class _Base(nn.Module):
    """The three matrices as the book stores them; each mistake only changes ``forward``."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SAScaleByDin(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # the input's width
        w = _safe_softmax(scores, mask)
        return w @ v, w


class SAQueriesAsKeys(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, v = x @ self.W_q, x @ self.W_v
        k = x @ self.W_q  # copy-paste: W_q for the keys as well
        w = _safe_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SASoftmaxOverQueries(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=1)
        return w @ v, w


class SAWeightsTransposed(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        w = _safe_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w.transpose(1, 2)  # (key, query) to plot it like the paper


class SAMaskIgnored(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class SAMaskPolarity(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        w = _safe_softmax(scores, None if mask is None else ~mask)
        return w @ v, w


class SAValueWidthDk(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))  # d_v ignored

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        w = _safe_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SAMixesInputs(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        w = _safe_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ x, w  # mixed the inputs; W_v is never used


class SAFillZero(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, 0.0)  # "zero out" the hidden keys
        w = torch.softmax(scores, dim=-1)
        return w @ v, w


class SATransposeBatchAxis(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(0, 1) / math.sqrt(q.shape[-1])  # meant K^T
        w = _safe_softmax(scores, mask)
        return w @ v, w


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        w = _safe_softmax(q @ k.mT / q.shape[-1] ** 0.5, mask)
        return w @ v, w


class SAEinsum(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) / math.sqrt(self.W_k.shape[1])
        w = _safe_softmax(scores, mask)
        return torch.einsum("bqs,bsv->bqv", w, v), w


class SAFloat64(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        x64 = x.double()
        q, k, v = x64 @ self.W_q.double(), x64 @ self.W_k.double(), x64 @ self.W_v.double()
        w = _safe_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return (w @ v).to(x.dtype), w.to(x.dtype)


class SAScaledQuery(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        q = (x @ self.W_q) / math.sqrt(d_k)  # scale the queries instead of the scores
        k, v = x @ self.W_k, x @ self.W_v
        w = _safe_softmax(torch.matmul(q, k.transpose(-1, -2)), mask)
        return torch.matmul(w, v), w


CASES = [
    BlindCase(
        CHECK,
        "scaled_by_d_in",
        SAScaleByDin,
        "mistake",
        "I divided the scores by sqrt(d_in), the input width, instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "W_q_used_for_keys",
        SAQueriesAsKeys,
        "mistake",
        "I computed the keys with W_q too (copy-paste), so W_k is never used.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries, instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, keys on the rows, to plot them like the paper.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "I accepted the mask argument but never applied it.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        SAMaskPolarity,
        "mistake",
        "I hid the keys where the mask is True instead of where it is False.",
    ),
    BlindCase(
        CHECK,
        "W_v_has_width_d_k",
        SAValueWidthDk,
        "mistake",
        "I made W_v (d_in, d_k) like the other two and ignored d_v.",
    ),
    BlindCase(
        CHECK,
        "mixes_inputs_not_values",
        SAMixesInputs,
        "mistake",
        "I returned w @ x, mixing the raw inputs instead of the values x W_v.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        SAFillZero,
        "mistake",
        "I set the hidden keys' scores to 0 instead of -inf before the softmax.",
    ),
    BlindCase(
        CHECK,
        "transpose_batch_axis",
        SATransposeBatchAxis,
        "mistake",
        "I wrote k.transpose(0, 1) for K^T, which swaps the batch and time axes instead of "
        "the last two.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_layers",
        SALinearLayers,
        "correct",
        "I used bias-free nn.Linear layers named W_q, W_k, W_v and .mT for the transpose.",
    ),
    BlindCase(CHECK, "einsum", SAEinsum, "correct", "I wrote every product with einsum."),
    BlindCase(
        CHECK,
        "float64_inside",
        SAFloat64,
        "correct",
        "I computed in float64 and cast the output and weights back.",
    ),
    BlindCase(
        CHECK,
        "scale_queries_first",
        SAScaledQuery,
        "correct",
        "I divided the queries by sqrt(d_k) before the product instead of the scores.",
    ),
]
