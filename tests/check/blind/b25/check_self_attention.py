"""Blind set B25, check_self_attention (chapter 8): single-head self-attention as readers write it."""

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
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Matrices(nn.Module):
    """The three matrices as the chapter stores them; the mistakes change forward."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SAScaleByDin(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(x.shape[-1]), mask)
        return weights @ v, weights


class SAScaleByDv(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(v.shape[-1]), mask)
        return weights @ v, weights


class SAQueriesAsKeys(_Matrices):
    def forward(self, x, mask=None):
        q = x @ self.W_q
        k = x @ self.W_q  # copy-paste from the line above
        v = x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAWeightsTransposedInProduct(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights.transpose(1, 2) @ v, weights  # sum over the queries of each key


class SAReturnsKeyRows(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights.transpose(1, 2)  # (key, query), to plot keys down the side


class SAWeightTransposed(_Matrices):
    def forward(self, x, mask=None):
        q = x @ self.W_q.T  # like nn.Linear, x W^T
        k = x @ self.W_k.T
        v = x @ self.W_v.T
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAMaskInverted(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        weights = _masked_softmax(scores, None if mask is None else mask.logical_not())
        return weights @ v, weights


class SAMaskIgnored(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights


class SASoftmaxOverQueries(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=1)
        return weights @ v, weights


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SADvDefaultsToDin(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_v or d_in  # the output as wide as the input
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAOutOnly(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        return weights @ v


class SAResidual(_Matrices):
    def forward(self, x, mask=None):
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), mask)
        out = weights @ v
        if out.shape == x.shape:
            out = out + x  # keep the token's own vector, as in the tagger
        return out, weights


# ---------------------------------------------------------------- correct variants


class SABiasFreeLinear(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.einsum("bid,bjd->bij", q, k) / math.sqrt(q.size(-1))
        weights = _masked_softmax(scores, mask)
        return torch.einsum("bij,bjd->bid", weights, v), weights


class SAFusedProjection(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        qkv = x @ torch.cat([self.W_q, self.W_k, self.W_v], dim=1)  # one product
        q, k, v = qkv.split([d_k, d_k, self.W_v.shape[1]], dim=-1)
        scores = q @ k.mT * d_k**-0.5
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        weights = scores.softmax(-1)
        if mask is not None:
            weights = torch.nan_to_num(weights)  # a query with no key: zeros
        return weights @ v, weights


class SABatchLoop(_Matrices):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        outs, all_weights = [], []
        for b in range(x.shape[0]):
            xb = x[b]  # (T, d_in)
            q, k, v = xb @ self.W_q, xb @ self.W_k, xb @ self.W_v
            m = None
            if mask is not None:
                m = mask.expand(x.shape[0], x.shape[1], x.shape[1])[b]
            scores = q @ k.T / math.sqrt(q.shape[-1])
            w = _masked_softmax(scores, m)
            all_weights.append(w)
            outs.append(w @ v)
        return torch.stack(outs), torch.stack(all_weights)


class SAScaledQueriesExtraArgs(_Matrices):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, dropout: float = 0.0):
        super().__init__(d_in, d_k, d_v)
        self.dropout = dropout

    def forward(self, x, mask=None):
        q = torch.matmul(x, self.W_q) / math.sqrt(self.W_q.shape[1])
        k = torch.matmul(x, self.W_k)
        v = torch.matmul(x, self.W_v)
        weights = _masked_softmax(torch.matmul(q, k.transpose(-1, -2)), mask)
        dropped = F.dropout(weights, self.dropout, self.training)
        return torch.matmul(dropped, v), weights


CASES = [
    BlindCase(
        CHECK,
        "scale_by_d_in",
        SAScaleByDin,
        "mistake",
        "I divided by sqrt of x's last dimension, d_in, instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_v",
        SAScaleByDv,
        "mistake",
        "I divided by sqrt(d_v), reading the size off v instead of k.",
    ),
    BlindCase(
        CHECK,
        "keys_with_W_q",
        SAQueriesAsKeys,
        "mistake",
        "I copied the line for q and forgot to change W_q into W_k for the keys.",
    ),
    BlindCase(
        CHECK,
        "weights_transposed_in_product",
        SAWeightsTransposedInProduct,
        "mistake",
        "I multiplied weights^T by V, summing over the queries of each key.",
    ),
    BlindCase(
        CHECK,
        "returns_keys_by_queries",
        SAReturnsKeyRows,
        "mistake",
        "I returned the weights transposed, one row per key, to plot them the other way.",
    ),
    BlindCase(
        CHECK,
        "x_times_W_transposed",
        SAWeightTransposed,
        "mistake",
        "I wrote x @ W_q.T as nn.Linear does, although the chapter stores W_q as (d_in, d_k).",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        SAMaskInverted,
        "mistake",
        "I inverted the mask with logical_not, thinking True marks the keys to hide.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "I took mask as an argument but never applied it.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=1 of the (B, T, T) scores, the queries.",
    ),
    BlindCase(
        CHECK,
        "linear_layers_with_bias",
        SALinearWithBias,
        "mistake",
        "I used nn.Linear layers but kept their default bias.",
    ),
    BlindCase(
        CHECK,
        "d_v_defaults_to_d_in",
        SADvDefaultsToDin,
        "mistake",
        "I made d_v default to d_in instead of d_k.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        SAOutOnly,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "adds_input",
        SAResidual,
        "mistake",
        "I added x to the output when the sizes match, to keep each token's own vector.",
    ),
    BlindCase(
        CHECK,
        "bias_free_linear_einsum",
        SABiasFreeLinear,
        "correct",
        "Bias-free nn.Linear layers named W_q, W_k, W_v, and einsum for both products.",
    ),
    BlindCase(
        CHECK,
        "fused_projection",
        SAFusedProjection,
        "correct",
        "One product with the three matrices side by side, split into q, k, v; nan_to_num for "
        "a query with no visible key.",
    ),
    BlindCase(
        CHECK,
        "loop_over_batch",
        SABatchLoop,
        "correct",
        "A Python loop over the sentences of the batch, 2-D products inside, stacked.",
    ),
    BlindCase(
        CHECK,
        "scaled_queries_dropout_arg",
        SAScaledQueriesExtraArgs,
        "correct",
        "The scale applied to q before the product; an extra dropout argument defaulting to 0.",
    ),
]
