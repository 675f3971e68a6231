"""Blind set B31, check_self_attention (chapter 8): single-head self-attention with W_q, W_k, W_v."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import attention

from .. import BlindCase

CHECK = "check_self_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The right parameters; the mistakes below change only forward (unless said otherwise)."""

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
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1), mask)
        return weights @ v, weights


class SADivideByDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / q.shape[-1], mask)
        return weights @ v, weights


class SAScaleByDin(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)  # d of x
        return weights @ v, weights


class SAScaleByDv(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAOneMatrixForQK(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # copy-paste: W_q for the keys too
        v = x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAQKSwapped(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_k  # the names mixed up
        k = x @ self.W_q
        v = x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=1))
        return weights @ v, weights


class SAWeightsTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # column j = what query j looked at


class SAOutputTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return v.transpose(1, 2) @ weights.transpose(1, 2), weights  # V^T A^T, (B, d_v, T)


class SAMaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SAMaskInverted(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is
        weights = torch.nan_to_num(scores.softmax(-1))
        return weights @ v, weights


class SANoValueProjection(_Base):
    def forward(self, x, mask=None):
        q, k, _ = self.qkv(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # the values are the inputs themselves


class SAIgnoresDv(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))  # d_v = d_k always

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.mT / math.sqrt(k.shape[-1])
        weights = _msoftmax(scores, mask)
        return weights @ v, weights


class SAEinsum(_Base):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / q.shape[-1] ** 0.5
        weights = _msoftmax(scores, mask)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAChapterSixAttention(_Base):
    def forward(self, x, mask=None):
        return attention(x @ self.W_q, x @ self.W_k, x @ self.W_v, mask)


class SAFloat64Inside(_Base):
    def forward(self, x, mask=None):
        x64 = x.double()
        q, k, v = (x64 @ W.double() for W in (self.W_q, self.W_k, self.W_v))
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return (weights @ v).to(x.dtype), weights.to(x.dtype)


class SAProjectOnce(_Base):
    def forward(self, x, mask=None):
        d_k = self.W_q.shape[1]
        W = torch.cat([self.W_q, self.W_k, self.W_v], dim=1)  # one product for q, k and v
        q, k, v = torch.split(x @ W, [d_k, d_k, self.W_v.shape[1]], dim=-1)
        scores = torch.baddbmm(
            torch.zeros(1, 1, 1, dtype=x.dtype), q, k.transpose(1, 2), alpha=d_k**-0.5
        )
        weights = _msoftmax(scores, mask)
        return torch.bmm(weights, v), weights


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(CHECK, "divide_by_d_k", SADivideByDk, "mistake", "I divided by d_k, not sqrt(d_k)."),
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByDin,
        "mistake",
        "I divided by the square root of x's width d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_v",
        SAScaleByDv,
        "mistake",
        "I divided by the square root of d_v instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "w_q_for_keys_too",
        SAOneMatrixForQK,
        "mistake",
        "I used W_q for both the queries and the keys (copy-paste slip).",
    ),
    BlindCase(
        CHECK,
        "q_and_k_matrices_swapped",
        SAQKSwapped,
        "mistake",
        "I mixed up the names: queries from W_k and keys from W_q, so the scores are transposed.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1, the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, one column per query.",
    ),
    BlindCase(
        CHECK,
        "output_transposed",
        SAOutputTransposed,
        "mistake",
        "I computed V^T A^T (column vectors, as in the notes) and returned (B, d_v, T).",
    ),
    BlindCase(CHECK, "mask_ignored", SAMaskIgnored, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        SAMaskInverted,
        "mistake",
        "I filled -inf where the mask is True.",
    ),
    BlindCase(
        CHECK,
        "no_value_projection",
        SANoValueProjection,
        "mistake",
        "I mixed the inputs x themselves instead of V = x W_v.",
    ),
    BlindCase(
        CHECK,
        "d_v_ignored",
        SAIgnoresDv,
        "mistake",
        "I made W_v (d_in, d_k) and ignored the d_v argument.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_layers",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers for W_q, W_k, W_v; k.mT for the transpose.",
    ),
    BlindCase(CHECK, "einsum", SAEinsum, "correct", "Every product written with einsum."),
    BlindCase(
        CHECK,
        "chapter_6_attention",
        SAChapterSixAttention,
        "correct",
        "The projections, then chapter 6's attention(q, k, v, mask).",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        SAFloat64Inside,
        "correct",
        "Computed in float64, both results cast back to x's dtype.",
    ),
    BlindCase(
        CHECK,
        "one_projection_baddbmm",
        SAProjectOnce,
        "correct",
        "The three matrices concatenated for one product, then split; baddbmm with alpha for "
        "the scale.",
    ),
]
