"""Blind set B17, check_self_attention (chapter 8): a single-head self-attention layer as readers
write it."""

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
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The right parameters; each mistake below changes only ``forward``."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SANoScale(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2), mask)
        return weights @ v, weights


class SADivideByDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / self.W_k.shape[1], mask)
        return weights @ v, weights


class SAScaleByInputWidth(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAScaleByDv(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAOneMatrixForQK(_Base):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # queries and keys are the same projection in self-attention
        v = x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ v, weights


class SAWeightsTransposed(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # (key, query), the way I plot them


class SAOutputFromTransposedWeights(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        out = weights.transpose(1, 2) @ v  # each key's value spread over the queries
        return out, weights


class SAMaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights  # self-attention sees the whole sentence


class SAMaskTrueBlocks(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = masked out
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SAValuesNotProjected(_Base):
    def forward(self, x, mask=None):
        q, k = x @ self.W_q, x @ self.W_k
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # mix the token vectors themselves


class SAWeightsTimesTranspose(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = (q @ k.transpose(1, 2)).transpose(1, 2)  # rows = keys, to softmax over them
        weights = _masked_softmax(scores / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    """Bias-free nn.Linear layers named W_q, W_k, W_v (the chapter accepts them)."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / q.shape[-1] ** 0.5
        weights = _masked_softmax(scores, mask)
        return torch.bmm(weights, v), weights


class SAEinsum(_Base):
    """einsum for the projections and the products; the mask through torch.where."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / math.sqrt(self.W_q.shape[1])
        if mask is not None:
            mask = mask.expand_as(scores)
            empty = ~mask.any(-1, keepdim=True)
            scores = torch.where(mask | empty, scores, scores.new_tensor(float("-inf")))
            weights = torch.where(empty, torch.zeros_like(scores), scores.softmax(-1))
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SAFusedProjection(_Base):
    """One product with the three matrices side by side, split afterwards; the output from
    F.scaled_dot_product_attention (a query with no visible key given every key, then zeroed)."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        qkv = x @ torch.cat([self.W_q, self.W_k, self.W_v], dim=1)
        q, k, v = qkv.split([d_k, d_k, self.W_v.shape[1]], dim=-1)
        weights = _masked_softmax(q @ k.mT / math.sqrt(d_k), mask)
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v), weights
        has_key = mask.any(-1, keepdim=True)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
        return out.masked_fill(~has_key, 0.0), weights


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to divide by sqrt(d_k)."),
    BlindCase(
        CHECK,
        "divide_by_d_k",
        SADivideByDk,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_d_in",
        SAScaleByInputWidth,
        "mistake",
        "I scaled by the square root of x's width d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_d_v",
        SAScaleByDv,
        "mistake",
        "I scaled by sqrt(d_v), the values' size, instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "one_matrix_for_q_and_k",
        SAOneMatrixForQK,
        "mistake",
        "I used W_q for both the queries and the keys, since both come from the same x.",
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
        "weights_returned_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed, one row per key, the way I like to plot them.",
    ),
    BlindCase(
        CHECK,
        "output_from_transposed_weights",
        SAOutputFromTransposedWeights,
        "mistake",
        "I multiplied the transposed weights by the values, so the output mixes along the wrong "
        "axis.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "I accepted the mask argument but never used it.",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        SAMaskTrueBlocks,
        "mistake",
        "I filled -inf where the mask is True, the polarity of nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "values_not_projected",
        SAValuesNotProjected,
        "mistake",
        "I mixed the inputs x themselves instead of the values x W_v.",
    ),
    BlindCase(
        CHECK,
        "scores_transposed_before_softmax",
        SAWeightsTimesTranspose,
        "mistake",
        "I transposed the scores so that the keys are the rows before the softmax over the last "
        "axis, which normalises over the queries instead.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_bmm",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v, and torch.bmm for the products.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        SAEinsum,
        "correct",
        "einsum for the projections and both products; the mask through torch.where.",
    ),
    BlindCase(
        CHECK,
        "fused_projection_sdpa",
        SAFusedProjection,
        "correct",
        "One product with the three matrices concatenated and split, out from "
        "F.scaled_dot_product_attention, the weights computed alongside.",
    ),
]
