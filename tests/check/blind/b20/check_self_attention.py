"""Blind set B20, check_self_attention (chapter 8): single-head self-attention as readers
write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _Base(nn.Module):
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
        weights = _msoftmax(q @ k.transpose(1, 2), mask)
        return weights @ v, weights


class SADivideDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / q.shape[-1], mask)
        return weights @ v, weights


class SAScaleDv(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAScaleDin(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAQueryForKeys(_Base):
    def forward(self, x, mask=None):
        q, v = x @ self.W_q, x @ self.W_v
        k = x @ self.W_q  # copy-paste from the line above
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SASoftmaxQueries(_Base):
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
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # (key, query), to plot keys on y


class SAOutputFromTransposedWeights(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights.transpose(1, 2) @ v, weights


class SAMaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SAMaskInverted(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # hide where the mask is set
        weights = torch.softmax(scores, dim=-1).nan_to_num()
        return weights @ v, weights


class SAMaskAfterSoftmax(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        if mask is not None:
            weights = weights * mask  # masked keys get weight 0
        return weights @ v, weights


class SAOnlyOutput(_Base):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _msoftmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v  # the weights are only for plotting


class SAWeightsFromRawX(_Base):
    def forward(self, x, mask=None):
        v = x @ self.W_v
        scores = x @ x.transpose(1, 2) / math.sqrt(self.W_q.shape[1])  # similarity of tokens
        weights = _msoftmax(scores, mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinear(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.d_k = d_k
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_v or d_k, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return weights @ v, weights


class SAEinsum(_Base):
    def forward(self, x, mask=None):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) * q.size(-1) ** -0.5
        weights = _msoftmax(scores, mask)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SABookAttention(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        from transformer_tutorial.attention import attention

        return attention(torch.matmul(x, self.W_q), x.matmul(self.W_k), x @ self.W_v, mask)


class SAFusedQK(_Base):
    def forward(self, x, mask=None):
        A = self.W_q @ self.W_k.T / math.sqrt(self.W_k.shape[1])  # (d_in, d_in) bilinear form
        scores = x @ A @ x.transpose(1, 2)
        weights = _msoftmax(scores, mask)
        return weights @ (x @ self.W_v), weights


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "I forgot to scale the scores."),
    BlindCase(CHECK, "divide_by_dk", SADivideDk, "mistake", "I divided by d_k, not sqrt(d_k)."),
    BlindCase(CHECK, "scale_sqrt_dv", SAScaleDv, "mistake", "I scaled by sqrt(d_v) (v's width)."),
    BlindCase(CHECK, "scale_sqrt_din", SAScaleDin, "mistake", "I scaled by sqrt(d_in), x's width."),
    BlindCase(
        CHECK,
        "W_q_for_keys",
        SAQueryForKeys,
        "mistake",
        "I computed K with W_q (copy-paste).",
    ),
    BlindCase(
        CHECK,
        "softmax_dim1",
        SASoftmaxQueries,
        "mistake",
        "My softmax is over dim=1, which is the queries.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed",
        SAWeightsTransposed,
        "mistake",
        "I returned the weights transposed (keys as rows).",
    ),
    BlindCase(
        CHECK,
        "output_from_transposed_weights",
        SAOutputFromTransposedWeights,
        "mistake",
        "I mixed the values with weights.transpose(1, 2).",
    ),
    BlindCase(CHECK, "mask_ignored", SAMaskIgnored, "mistake", "I forgot to use the mask."),
    BlindCase(
        CHECK,
        "mask_inverted",
        SAMaskInverted,
        "mistake",
        "I filled -inf where the mask is True.",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        SAMaskAfterSoftmax,
        "mistake",
        "I multiplied the softmax weights by the mask afterwards.",
    ),
    BlindCase(
        CHECK,
        "output_only",
        SAOnlyOutput,
        "mistake",
        "My forward returns only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "scores_from_x",
        SAWeightsFromRawX,
        "mistake",
        "I scored x against x directly, without W_q and W_k.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear",
        SALinear,
        "correct",
        "Three bias-free nn.Linear layers, as the chapter allows.",
    ),
    BlindCase(CHECK, "einsum", SAEinsum, "correct", "Every product written with einsum."),
    BlindCase(
        CHECK,
        "book_attention",
        SABookAttention,
        "correct",
        "The projections, then chapter 6's attention function.",
    ),
    BlindCase(
        CHECK,
        "bilinear_form",
        SAFusedQK,
        "correct",
        "I formed W_q W_k^T / sqrt(d_k) once and scored x A x^T.",
    ),
]
