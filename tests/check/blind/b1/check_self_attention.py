"""Blind cases for check_self_attention (chapter 8)."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_self_attention"


class _Base(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))

    def qkv(self, x):
        return x @ self.W_q, x @ self.W_k, x @ self.W_v


class SANoScale(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1), mask)
        return w @ v, w


class SADivideByDk(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / q.shape[-1], mask)
        return w @ v, w


class SAKeyFromWq(_Base):
    def forward(self, x, mask=None):
        q, v = x @ self.W_q, x @ self.W_v
        k = x @ self.W_q  # copy-paste slip: W_q where W_k was meant
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SASoftmaxQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=-2)
        return w @ v, w


class SAKeysTimesQueries(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)  # rows = keys
        return w @ v, w


class SAMaskInverted(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(
                mask, float("-inf")
            )  # True = blocked, as in nn.MultiheadAttention
        w = torch.softmax(scores, dim=-1)
        return w @ v, w


class SAScaleDv(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), mask)
        return w @ v, w


class SAWeightsTransposedOut(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w.transpose(-2, -1)  # returns weights with row = key


class SAMaskIgnored(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v, w


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k)  # bias left on
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v)

    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v, w


class SAForwardReturnsOut(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return w @ v


class SALinearNoBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = (
            torch.baddbmm(
                q.new_zeros(q.shape[0], q.shape[1], k.shape[1]),
                q,
                k.transpose(1, 2),
                alpha=1 / math.sqrt(q.size(-1)),
            )
            if q.dim() == 3
            else q @ k.mT / math.sqrt(q.size(-1))
        )
        w = masked_softmax(scores, mask)
        return w @ v, w


class SAEinsumFused(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None, return_weights: bool = True):
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,btk->bqt", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            mask = mask.expand_as(scores)
            empty = ~mask.any(-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
            w = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            w = scores.softmax(-1)
        out = torch.einsum("bqt,btv->bqv", w, v)
        return (out, w) if return_weights else out


CASES = [
    BlindCase(CHECK, "no_scale", SANoScale, "mistake", "forgets to divide the scores by sqrt(d_k)"),
    BlindCase(
        CHECK,
        "divide_by_dk",
        SADivideByDk,
        "mistake",
        "divides the scores by d_k instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "keys_projected_with_Wq",
        SAKeyFromWq,
        "mistake",
        "computes the keys with W_q (copy-paste), so queries and keys share one matrix",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        SASoftmaxQueries,
        "mistake",
        "takes the softmax over dim=-2, the queries, instead of the keys",
    ),
    BlindCase(
        CHECK,
        "scores_k_times_q",
        SAKeysTimesQueries,
        "mistake",
        "computes the scores as K Q^T instead of Q K^T, so rows are keys",
    ),
    BlindCase(
        CHECK,
        "mask_polarity_true_blocks",
        SAMaskInverted,
        "mistake",
        "fills -inf where the mask is True, as with nn.MultiheadAttention's polarity",
    ),
    BlindCase(
        CHECK,
        "scale_sqrt_dv",
        SAScaleDv,
        "mistake",
        "divides the scores by sqrt(d_v) instead of sqrt(d_k)",
    ),
    BlindCase(
        CHECK,
        "weights_returned_transposed",
        SAWeightsTransposedOut,
        "mistake",
        "returns the attention weights transposed (row = key) although the output is right",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        SAMaskIgnored,
        "mistake",
        "takes a mask argument but never applies it",
    ),
    BlindCase(
        CHECK,
        "linear_layers_with_bias",
        SALinearWithBias,
        "mistake",
        "uses nn.Linear projections but leaves their bias on",
    ),
    BlindCase(
        CHECK,
        "slip_instance_not_class",
        SALinearNoBias(6, 3, 5),
        "mistake",
        "passes an instance MySelfAttention(6, 3, 5) instead of the class itself",
    ),
    BlindCase(
        CHECK,
        "slip_forward_returns_only_out",
        SAForwardReturnsOut,
        "mistake",
        "returns only the output from forward, not the pair (out, weights)",
    ),
    BlindCase(
        CHECK,
        "linear_no_bias_baddbmm",
        SALinearNoBias,
        "correct",
        "uses bias-free nn.Linear layers and computes the scaled scores with torch.baddbmm",
    ),
    BlindCase(
        CHECK,
        "einsum_with_return_weights_flag",
        SAEinsumFused,
        "correct",
        "writes every product with einsum, masks itself, and takes an optional return_weights=True flag",
    ),
]
