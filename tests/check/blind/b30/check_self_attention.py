"""Blind set B30, check_self_attention (chapter 8): the single-head self-attention layer, as
readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Matrices(nn.Module):
    """The three matrices as the docstring asks; the mistakes below change forward only."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SANoScale(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
        return weights @ v, weights


class SAScaleByDin(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAQueryMatrixTwice(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = x @ self.W_q
        k = x @ self.W_q  # copy-pasted from the line above
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ (x @ self.W_v), weights


class SASoftmaxOverQueries(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)  # (B, T, T): dim 1
        return weights @ v, weights


class SAWeightsKeyRows(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(-2, -1)  # (key, query) to plot like the notes


class SAMaskIgnored(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SAMaskBlocks(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = _masked_softmax(scores, None if mask is None else mask.logical_not())
        return weights @ v, weights


class SAValuesAreInputs(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # mix the inputs themselves


class SAReturnsWeightsFirst(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights, weights @ v


class SADvDefaultsToDin(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_in if d_v is None else d_v  # the output as wide as the input
        self.W_q = nn.Parameter(torch.randn(d_in, d_k))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v))

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAMaskMultipliesWeights(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            weights = weights * mask  # hidden keys get weight 0
        return weights @ v, weights


class SAPostNormResidual(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        out = weights @ v
        if out.shape == x.shape:
            out = out + x  # keep the word itself, as the tagger does with [x; context]
        return out, weights


class SAMatrixTranspose(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.T / math.sqrt(q.shape[-1])  # K^T as in the formula
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    """Three bias-free nn.Linear layers instead of raw matrices."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.mT / q.shape[-1] ** 0.5, mask)
        return weights @ v, weights


class SAEinsum(_Matrices):
    """einsum for every product, the query already scaled."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q) / math.sqrt(self.W_q.shape[1])
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            empty = torch.isneginf(scores).all(-1, keepdim=True)
            scores = scores.masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAOneProjection(_Matrices):
    """One product with the three matrices side by side, then split."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        qkv = x @ torch.cat([self.W_q, self.W_k, self.W_v], dim=1)
        q, k, v = qkv.split([d_k, d_k, self.W_v.shape[1]], dim=-1)
        scores = torch.baddbmm(
            torch.zeros(1, 1, 1, dtype=x.dtype), q, k.transpose(1, 2), alpha=d_k**-0.5
        )
        weights = _masked_softmax(scores, mask)
        return F.dropout(weights, p=0.0) @ v, weights


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I left the scores unscaled."),
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByDin,
        "mistake",
        "I divided by sqrt of x's width d_in instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "w_q_used_for_keys",
        SAQueryMatrixTwice,
        "mistake",
        "A copy-paste slip: the keys are x @ W_q as well.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1 of the (B, T, T) scores, which is the query axis.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsKeyRows,
        "mistake",
        "I return the weights transposed, one row per key, to plot them like the notes.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "forward accepts mask but never uses it.",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        SAMaskBlocks,
        "mistake",
        "I read the mask as True = blocked and hid the keys where it is True.",
    ),
    BlindCase(
        CHECK,
        "values_are_inputs",
        SAValuesAreInputs,
        "mistake",
        "I mixed the inputs x with the weights and never used W_v.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        SAReturnsWeightsFirst,
        "mistake",
        "I return (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "d_v_defaults_to_d_in",
        SADvDefaultsToDin,
        "mistake",
        "When d_v is not given I made it d_in, not d_k.",
    ),
    BlindCase(
        CHECK,
        "mask_multiplies_weights",
        SAMaskMultipliesWeights,
        "mistake",
        "I multiplied the softmax weights by the mask, so the visible weights do not sum to 1.",
    ),
    BlindCase(
        CHECK,
        "residual_added",
        SAPostNormResidual,
        "mistake",
        "I added x to the output when the widths agree, to keep the word itself.",
    ),
    BlindCase(
        CHECK,
        "matrix_transpose_on_batch",
        SAMatrixTranspose,
        "mistake",
        "I wrote k.T as in the formula; on a (B, T, d_k) tensor .T reverses all three axes.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_layers",
        SALinearLayers,
        "correct",
        "Three nn.Linear(bias=False) layers instead of raw matrices; k.mT for the transpose.",
    ),
    BlindCase(
        CHECK,
        "einsum_scaled_query",
        SAEinsum,
        "correct",
        "einsum for every product, the scale applied to q first.",
    ),
    BlindCase(
        CHECK,
        "one_fused_projection",
        SAOneProjection,
        "correct",
        "x multiplied once by [W_q | W_k | W_v] and split; baddbmm with alpha = 1/sqrt(d_k).",
    ),
]
