"""Chapter 8, "Your turn": ``MySelfAttention(d_in, d_k, d_v=None)``, ``forward(x, mask=None)``.

``Q = x W_q``, ``K = x W_k``, ``V = x W_v``, ``out = softmax(Q K^T / sqrt(d_k)) V``; returns
``(out (B, T, d_v), weights (B, T, T))``; mask boolean, True = may attend.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _Params(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.d_k = d_k
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# --- mistakes ---------------------------------------------------------------------------------


class ValuesWidthIsDk(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))  # d_v forgotten

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class ScaledByInputWidth(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1]), mask)  # sqrt(d_in)
        return weights @ v, weights


class MaskMultipliesScores(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores * mask  # hidden scores become 0
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class IfMaskTruthiness(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask:  # meant "if a mask was given"
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class MixesTheInputs(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return weights @ x, weights  # the values are the tokens themselves


class SoftmaxOverBatch(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=0)
        return weights @ v, weights


class OutputDividedInstead(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(-2, -1), mask)
        return weights @ v / math.sqrt(self.d_k), weights  # the 1/sqrt(d_k) on the output


class HeadAxisOnMask(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            mask = mask.unsqueeze(1)  # (B, 1, ...) as for the heads
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class MaskTransposed(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        mask = None if mask is None else mask.transpose(-2, -1)  # rows = keys, I thought
        weights = _softmax(scores, mask)
        return weights @ v, weights


class LinearsKeepBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)  # bias=True by default
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


# --- correct variants -------------------------------------------------------------------------


class EinsumParams(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,btk->bqt", q, k) / math.sqrt(self.W_q.shape[1])
        weights = _softmax(scores, mask)
        return torch.einsum("bqt,btv->bqv", weights, v), weights


class BiasFreeLinears(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = self.W_q(x) / math.sqrt(self.W_q.out_features)  # scale the queries up front
        scores = torch.bmm(q, self.W_k(x).transpose(1, 2))
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
            empty = ~mask.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(empty, 0.0)
            weights = torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)
        else:
            weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights, self.W_v(x)), weights


class XavierInitMatmul(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, d_k if d_v is None else d_v))
        for w in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(w)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = (torch.matmul(x, w.to(x.dtype)) for w in (self.W_q, self.W_k, self.W_v))
        scores = torch.matmul(q, k.mT) * q.shape[-1] ** -0.5
        weights = _softmax(scores, mask)
        return torch.matmul(weights, v), weights


CASES = [
    BlindCase(
        CHECK,
        "values_width_is_d_k",
        ValuesWidthIsDk,
        "mistake",
        "I created W_v as (d_in, d_k), ignoring d_v, so the output is d_k wide.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_input_width",
        ScaledByInputWidth,
        "mistake",
        "I divided the scores by sqrt(d_in) (the width of x) instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "mask_multiplies_scores",
        MaskMultipliesScores,
        "mistake",
        "I multiplied the scores by the mask, which gives hidden keys a score of 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "if_mask_truthiness",
        IfMaskTruthiness,
        "mistake",
        "I wrote `if mask:` instead of `if mask is not None:`, which fails on a mask tensor.",
    ),
    BlindCase(
        CHECK,
        "mixes_the_inputs",
        MixesTheInputs,
        "mistake",
        "I multiplied the weights with x instead of the values V = x W_v.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        SoftmaxOverBatch,
        "mistake",
        "I took softmax(dim=0), over the batch, instead of over the keys.",
    ),
    BlindCase(
        CHECK,
        "output_divided_instead",
        OutputDividedInstead,
        "mistake",
        "I divided the output by sqrt(d_k) instead of the scores before the softmax.",
    ),
    BlindCase(
        CHECK,
        "head_axis_on_mask",
        HeadAxisOnMask,
        "mistake",
        "I unsqueezed the mask at dim 1 as for multi-head attention, which does not fit the "
        "(B, T, T) scores.",
    ),
    BlindCase(
        CHECK,
        "mask_transposed",
        MaskTransposed,
        "mistake",
        "I transposed the mask's last two axes, so it hides queries instead of keys.",
    ),
    BlindCase(
        CHECK,
        "linears_keep_bias",
        LinearsKeepBias,
        "mistake",
        "I used nn.Linear for W_q, W_k and W_v but kept their default bias.",
    ),
    BlindCase(
        CHECK,
        "einsum_params",
        EinsumParams,
        "correct",
        "I wrote every product as an einsum on the (d_in, d_k) parameter matrices.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linears",
        BiasFreeLinears,
        "correct",
        "I used bias-free nn.Linear layers, scaled the queries before bmm, and zeroed rows with "
        "no visible key.",
    ),
    BlindCase(
        CHECK,
        "xavier_init_matmul",
        XavierInitMatmul,
        "correct",
        "I initialised the matrices with xavier_uniform_, cast them to x's dtype and scaled the "
        "scores by multiplying with d_k ** -0.5.",
    ),
]
