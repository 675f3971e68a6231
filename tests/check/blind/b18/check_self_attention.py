"""Blind set B18, check_self_attention (chapter 8): the single-head self-attention layer as
readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import attention

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
    """The three parameter matrices of the skeleton, shared by the mistakes in ``forward``."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.d_k = d_k
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SAScaleByDIn(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # the size of the vectors
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SADividedByDk(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / self.d_k, mask)
        return weights @ v, weights


class SASharedQK(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = x @ self.W_q
        k = x @ self.W_q  # queries and keys live in the same space
        v = x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return weights @ v, weights


class SASoftmaxOverQueries(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)  # normalize each column
        return weights @ v, weights


class SAWeightsReturnedTransposed(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return weights @ v, weights.transpose(1, 2)  # (key, query), the notes' alpha_{i,j}


class SAOutputFromTransposedWeights(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        out = weights.transpose(-2, -1) @ v  # b^j = sum_i alpha_{i,j} v^i
        return out, weights


class SAMaskTrueBlocks(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = hidden
        weights = scores.softmax(dim=-1)
        return weights @ v, weights


class SAIgnoresMask(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), dim=-1)
        return weights @ v, weights


class SANoValueProjection(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return weights @ x, weights  # mix the inputs themselves


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)  # nn.Linear, with its default bias
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAKDotT(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        Q, K, V = x @ self.W_q, x @ self.W_k, x @ self.W_v
        A = Q @ K.T / math.sqrt(self.d_k)  # as in the chapter's matrix form
        A_prime = _masked_softmax(A, mask)
        return A_prime @ V, A_prime


class SAReturnsOutputOnly(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return weights @ v


# ---------------------------------------------------------------- correct variants


class SABiasFreeLinear(nn.Module):
    """Bias-free nn.Linear layers (accepted by the chapter), calling chapter 6's attention."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return attention(self.W_q(x), self.W_k(x), self.W_v(x), mask)


class SAEinsum(nn.Module):
    """einsum throughout, torch.where for the mask; parameters created empty, then initialized."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_v or d_k
        self.W_q = nn.Parameter(torch.empty(d_in, d_k))
        self.W_k = nn.Parameter(torch.empty(d_in, d_k))
        self.W_v = nn.Parameter(torch.empty(d_in, d_v))
        for w in (self.W_q, self.W_k, self.W_v):
            nn.init.xavier_uniform_(w)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
            seen = mask.any(-1, keepdim=True)
            weights = torch.where(seen, scores, 0.0).softmax(-1) * seen
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class SAScaledQueriesHelper(_Matrices):
    """The scale folded into the queries; an extra scores method."""

    def scores(self, x: Tensor) -> Tensor:
        q = (x @ self.W_q) * self.d_k**-0.5
        return q @ (x @ self.W_k).mT

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        weights = _masked_softmax(self.scores(x), mask)
        return torch.bmm(weights, x @ self.W_v), weights


CASES = [
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByDIn,
        "mistake",
        "I divided by the square root of d_in, the input's width, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "divided_by_d_k",
        SADividedByDk,
        "mistake",
        "I divided the scores by d_k instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "shared_q_k_matrix",
        SASharedQK,
        "mistake",
        "I computed the keys with W_q too, so queries and keys are the same vectors.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1 of (B, T, T), the queries, so columns sum to 1.",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        SAWeightsReturnedTransposed,
        "mistake",
        "I returned the weights transposed, rows as keys, though out is right.",
    ),
    BlindCase(
        CHECK,
        "output_from_transposed_weights",
        SAOutputFromTransposedWeights,
        "mistake",
        "I summed the values with weights.transpose(-2, -1), mixing by a key's column.",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        SAMaskTrueBlocks,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'hidden'.",
    ),
    BlindCase(
        CHECK,
        "ignores_mask",
        SAIgnoresMask,
        "mistake",
        "I accepted the mask argument but never applied it.",
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
        "linear_with_bias",
        SALinearWithBias,
        "mistake",
        "I used nn.Linear layers for the three matrices but left their default bias on.",
    ),
    BlindCase(
        CHECK,
        "K_dot_T_on_batch",
        SAKDotT,
        "mistake",
        "I copied Q @ K.T from the chapter's 2-D example; on a (B, T, d_k) batch .T reverses "
        "all three axes.",
    ),
    BlindCase(
        CHECK,
        "returns_output_only",
        SAReturnsOutputOnly,
        "mistake",
        "I return only out, not the pair (out, weights).",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_and_attention",
        SABiasFreeLinear,
        "correct",
        "Bias-free nn.Linear layers, and chapter 6's attention function for the rest.",
    ),
    BlindCase(
        CHECK,
        "einsum_where",
        SAEinsum,
        "correct",
        "einsum for every product, torch.where for the mask; Xavier initialization.",
    ),
    BlindCase(
        CHECK,
        "scaled_queries_helper",
        SAScaledQueriesHelper,
        "correct",
        "The scale folded into the queries in an extra scores method; bmm for the output.",
    ),
]
