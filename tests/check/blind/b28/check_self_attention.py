"""Blind set B28, check_self_attention (chapter 8): single-head self-attention as readers write
it."""

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


class _Matrices(nn.Module):
    """W_q, W_k (d_in, d_k) and W_v (d_in, d_v) as nn.Parameter matrices."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SAScaleByDin(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # the model's width d
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAScaleByDv(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAValuesUnprojected(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k = x @ self.W_q, x @ self.W_k
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ x, weights  # Q = K = V before projection


class SAResidual(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return v + weights @ v, weights  # each word keeps its own value plus the context


class SAZeroScoreMask(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, 0.0)  # hidden keys contribute nothing
        weights = scores.softmax(dim=-1)
        return weights @ v, weights


class SABoolMaskAdded(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores + mask  # an attention mask is added to the scores
        weights = scores.softmax(dim=-1)
        return weights @ v, weights


class SADefaultDvIsDin(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_v or d_in  # outputs as wide as the inputs by default
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAPlainTensors(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = torch.randn(d_in, d_k, requires_grad=True) / math.sqrt(d_in)
        self.W_k = torch.randn(d_in, d_k, requires_grad=True) / math.sqrt(d_in)
        self.W_v = torch.randn(d_in, d_v, requires_grad=True) / math.sqrt(d_in)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAMaskUnsqueezed(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        if mask is not None:
            mask = mask.unsqueeze(1)  # padding mask (B, T) -> (B, 1, T)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAReturnsPreSoftmax(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        A = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # A
        A_prime = _masked_softmax(A, mask)  # A'
        return A_prime @ v, A


class SATemperatureInverted(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        d_k = q.shape[-1]
        weights = _masked_softmax(q @ k.transpose(-2, -1) * d_k**-0.5 * d_k, mask)
        return weights @ v, weights


class SAReluNormalised(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        A = F.relu(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))  # the notes allow ReLU
        if mask is not None:
            A = A * mask
        weights = A / A.sum(-1, keepdim=True).clamp_min(1e-9)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearLayers(nn.Module):
    """Bias-free nn.Linear layers instead of raw matrices."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
        weights = _masked_softmax(scores, mask)
        return torch.matmul(weights, v), weights


class SAEinsum(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bik,bjk->bij", q, k) / q.shape[-1] ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            blank = ~mask.any(-1, keepdim=True)
            weights = scores.masked_fill(blank, 0.0).softmax(-1).masked_fill(blank, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bij,bjv->biv", weights, v), weights


class SALoopOverBatch(_Matrices):
    """One sentence at a time, with an extra return_scores flag that defaults to False."""

    def forward(
        self, x: Tensor, mask: Tensor | None = None, return_scores: bool = False
    ) -> tuple[Tensor, Tensor]:
        outs, ws = [], []
        full = None if mask is None else mask.expand(x.shape[0], x.shape[1], x.shape[1])
        for b in range(x.shape[0]):
            Q, K, V = x[b] @ self.W_q, x[b] @ self.W_k, x[b] @ self.W_v  # (T, .)
            A = Q @ K.T / math.sqrt(K.shape[1])
            A_prime = _masked_softmax(A, None if full is None else full[b])
            outs.append(A_prime @ V)
            ws.append(A if return_scores else A_prime)
        return torch.stack(outs), torch.stack(ws)


class SAFusedQK(_Matrices):
    """W_q W_k^T multiplied first: Q K^T = x (W_q W_k^T) x^T."""

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        bilinear = self.W_q @ self.W_k.T  # (d_in, d_in)
        scores = x @ bilinear @ x.transpose(-2, -1) / math.sqrt(self.W_k.shape[1])
        weights = _masked_softmax(scores, mask)
        return weights @ (x @ self.W_v), weights


CASES = [
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByDin,
        "mistake",
        "I divided by sqrt of the input width d_in instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_v",
        SAScaleByDv,
        "mistake",
        "I divided by sqrt(d_v), the values' width, instead of sqrt(d_k).",
    ),
    BlindCase(
        CHECK,
        "values_not_projected",
        SAValuesUnprojected,
        "mistake",
        "I mixed the raw inputs x instead of V = x W_v.",
    ),
    BlindCase(
        CHECK,
        "adds_own_value",
        SAResidual,
        "mistake",
        "I added each word's own value to its context: out = V + A' V.",
    ),
    BlindCase(
        CHECK,
        "mask_fills_zero",
        SAZeroScoreMask,
        "mistake",
        "I set the hidden keys' scores to 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "bool_mask_added",
        SABoolMaskAdded,
        "mistake",
        "I added the mask to the scores, as with PyTorch's float attention masks; a bool mask "
        "just adds 1 to the visible keys.",
    ),
    BlindCase(
        CHECK,
        "d_v_defaults_to_d_in",
        SADefaultDvIsDin,
        "mistake",
        "I made d_v default to d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "matrices_not_parameters",
        SAPlainTensors,
        "mistake",
        "I stored the three matrices as plain tensors with requires_grad, not nn.Parameter, so "
        "the module has no parameters to train.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed",
        SAMaskUnsqueezed,
        "mistake",
        "I unsqueezed the mask on axis 1, assuming a (B, T) padding mask.",
    ),
    BlindCase(
        CHECK,
        "returns_scores",
        SAReturnsPreSoftmax,
        "mistake",
        "I return A, the scaled scores, instead of A', the weights.",
    ),
    BlindCase(
        CHECK,
        "scale_cancelled",
        SATemperatureInverted,
        "mistake",
        "I wrote * d_k**-0.5 * d_k, which multiplies by sqrt(d_k) in the end.",
    ),
    BlindCase(
        CHECK,
        "relu_normalisation",
        SAReluNormalised,
        "mistake",
        "I used the notes' ReLU normalisation instead of a softmax.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_layers",
        SALinearLayers,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v instead of raw matrices.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        SAEinsum,
        "correct",
        "einsum for the projections, the scores and the weighted sum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sentences",
        SALoopOverBatch,
        "correct",
        "One sentence at a time in a loop, stacked; an extra return_scores flag that defaults "
        "to False.",
    ),
    BlindCase(
        CHECK,
        "bilinear_form",
        SAFusedQK,
        "correct",
        "W_q W_k^T multiplied first, so the scores are x (W_q W_k^T) x^T / sqrt(d_k).",
    ),
]
