"""Blind set B19, check_self_attention (chapter 8): a single-head self-attention layer."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The book's three matrices; the mistakes below differ only in ``forward``."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


# ---------------------------------------------------------------- mistakes


class SANoScale(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        w = _masked_softmax(q @ k.transpose(-2, -1), mask)
        return w @ v, w


class SADivideByDk(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        w = _masked_softmax(q @ k.transpose(-2, -1) / k.shape[-1], mask)
        return w @ v, w


class SAScaleByDin(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return w @ v, w


class SASharedQK(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q = x @ self.W_q
        k = x @ self.W_q  # the same projection for the keys
        v = x @ self.W_v
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SASwappedQK(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k = x @ self.W_k, x @ self.W_q  # the two names mixed up
        v = x @ self.W_v
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SASoftmaxQueries(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=1)  # dim 1 of (B, T, T)
        return w @ v, w


class SAWeightsTransposed(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w.transpose(1, 2)  # (key, query) for plotting


class SAOutTransposed(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w.transpose(-2, -1) @ v, w


class SAMaskIgnored(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class SAMaskInverted(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # masked_fill where mask is True
        w = torch.softmax(scores, dim=-1)
        return w @ v, w


class SAMaskAfterSoftmax(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.qkv(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            w = w * mask  # hidden keys get weight 0
        return w @ v, w


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)  # default bias=True
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x: Tensor, mask: Tensor | None = None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


# ---------------------------------------------------------------- correct variants


class SALinear(nn.Module):
    """Bias-free nn.Linear layers under the book's names; einsum for the scores."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(q.shape[-1])
        w = _masked_softmax(scores, mask)
        return torch.einsum("bts,bsd->btd", w, v), w


class SAScaledQuery(_Base):
    """The scale folded into q; masking by torch.where; matmul and mT."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.matmul(x, self.W_q) * self.W_q.shape[1] ** -0.5
        k = torch.matmul(x, self.W_k)
        v = torch.matmul(x, self.W_v)
        scores = q @ k.mT
        if mask is not None:
            scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
        w = scores.softmax(-1)
        return w @ v, w


class SASdpaOut(_Base):
    """out from F.scaled_dot_product_attention; the weights by hand for the return value."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.qkv(x)
        if mask is not None:
            mask = mask.expand(x.shape[0], x.shape[1], x.shape[1])
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        w = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return out, w


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to scale the scores."),
    BlindCase(
        CHECK, "divide_by_dk", SADivideByDk, "mistake", "I divided by d_k instead of sqrt(d_k)."
    ),
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByDin,
        "mistake",
        "I scaled by the square root of the input width d_in.",
    ),
    BlindCase(
        CHECK,
        "shared_qk_matrix",
        SASharedQK,
        "mistake",
        "I projected both queries and keys with W_q.",
    ),
    BlindCase(
        CHECK,
        "q_k_names_swapped",
        SASwappedQK,
        "mistake",
        "I computed Q with W_k and K with W_q.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxQueries,
        "mistake",
        "I took the softmax over dim=1 of (B, T, T), the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, one row per key.",
    ),
    BlindCase(
        CHECK,
        "output_from_transposed_weights",
        SAOutTransposed,
        "mistake",
        "I mixed the values with the transposed weights.",
    ),
    BlindCase(CHECK, "mask_ignored", SAMaskIgnored, "mistake", "I forgot to use the mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        SAMaskInverted,
        "mistake",
        "I called masked_fill(mask, -inf), hiding the keys the mask allows.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        SAMaskAfterSoftmax,
        "mistake",
        "I multiplied the weights by the mask after the softmax.",
    ),
    BlindCase(
        CHECK,
        "linear_with_bias",
        SALinearWithBias,
        "mistake",
        "I used nn.Linear for the three matrices but left their bias on.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_einsum",
        SALinear,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v; einsum for both products.",
    ),
    BlindCase(
        CHECK,
        "scaled_query_where",
        SAScaledQuery,
        "correct",
        "The scale folded into q, torch.where with -inf for the mask, k.mT.",
    ),
    BlindCase(
        CHECK,
        "sdpa_output",
        SASdpaOut,
        "correct",
        "out from F.scaled_dot_product_attention with the boolean mask; weights by hand.",
    ),
]
