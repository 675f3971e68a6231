"""Blind set B6, check_self_attention (chapter 8): a single-head self-attention layer."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Params(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SelfAttnNoScale(_Params):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2), mask)
        return weights @ v, weights


class SelfAttnDivideByDk(_Params):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / q.shape[-1], mask)
        return weights @ v, weights


class SelfAttnKeysFromWq(_Params):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # copy-pasted line
        v = x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnSoftmaxOverQueries(_Params):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ v, weights


class SelfAttnWeightsForPlotting(_Params):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # one column per query, as in the figures


class SelfAttnOutputTransposed(_Params):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        out = v.transpose(1, 2) @ weights.transpose(1, 2)  # O^T = V^T A^T, as in the notes
        return out, weights


class SelfAttnMaskIgnored(_Params):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SelfAttnMaskPolarity(_Params):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = masked out
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SelfAttnLinearLayout(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_k, d_in) / math.sqrt(d_in))  # (out, in) as Linear
        self.W_k = nn.Parameter(torch.randn(d_k, d_in) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_v, d_in) / math.sqrt(d_in))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q.T, x @ self.W_k.T, x @ self.W_v.T
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnDvDefaultsToDin(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_in if d_v is None else d_v  # keep the width of the input
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SelfAttnPlainTensors(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = torch.randn(d_in, d_k, requires_grad=True)  # leaf tensors that need grad
        self.W_k = torch.randn(d_in, d_k, requires_grad=True)
        self.W_v = torch.randn(d_in, d_v, requires_grad=True)

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SelfAttnLinearLayers(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        weights = _softmax(scores, mask)
        return weights @ v, weights


class SelfAttnEinsum(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) / self.W_k.shape[1] ** 0.5
        if mask is not None:
            scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
            empty = ~mask.any(-1, keepdim=True)
            scores = scores.masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class SelfAttnScaledQueryMatrix(_Params):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        q = x @ (self.W_q / math.sqrt(d_k))  # the scale folded into the query projection
        weights = _softmax(q @ (x @ self.W_k).mT, mask)
        return weights @ (x @ self.W_v), weights


CASES = [
    BlindCase(
        CHECK,
        "no_scale",
        SelfAttnNoScale,
        "mistake",
        "I forgot to divide the scores by sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "divide_by_dk",
        SelfAttnDivideByDk,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "keys_from_w_q",
        SelfAttnKeysFromWq,
        "mistake",
        "A copy-paste slip: the keys are x @ W_q, so W_k is never used.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SelfAttnSoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1 of the (B, T, T) scores, the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SelfAttnWeightsForPlotting,
        "mistake",
        "I returned the weights transposed, one column per query, to match the figures.",
    ),
    BlindCase(
        CHECK,
        "output_transposed",
        SelfAttnOutputTransposed,
        "mistake",
        "I computed O^T = V^T A^T as in the notes' column-vector picture, so out is (B, d_v, T).",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SelfAttnMaskIgnored,
        "mistake",
        "I accept the mask but never apply it.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity_flipped",
        SelfAttnMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'hidden'.",
    ),
    BlindCase(
        CHECK,
        "matrices_stored_out_by_in",
        SelfAttnLinearLayout,
        "mistake",
        "I stored the matrices as (d_k, d_in), like nn.Linear's weight, and used x @ W.T, "
        "instead of (d_in, d_k).",
    ),
    BlindCase(
        CHECK,
        "d_v_defaults_to_d_in",
        SelfAttnDvDefaultsToDin,
        "mistake",
        "When d_v is not given I made it d_in, not d_k.",
    ),
    BlindCase(
        CHECK,
        "plain_tensors_not_parameters",
        SelfAttnPlainTensors,
        "mistake",
        "I made the matrices plain tensors with requires_grad=True instead of nn.Parameter, so "
        "the module has no parameters and an optimizer never sees them.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_layers",
        SelfAttnLinearLayers,
        "correct",
        "Three bias-free nn.Linear layers named W_q, W_k, W_v instead of raw matrices.",
    ),
    BlindCase(
        CHECK,
        "einsum_everywhere",
        SelfAttnEinsum,
        "correct",
        "Every product as an einsum; the mask applied with torch.where, empty rows zeroed.",
    ),
    BlindCase(
        CHECK,
        "scale_in_query_matrix",
        SelfAttnScaledQueryMatrix,
        "correct",
        "The 1/sqrt(d_k) folded into W_q before projecting.",
    ),
]
