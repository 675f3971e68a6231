"""Blind set B29, check_multihead (chapter 9): multi-head attention with q_proj .. out_proj."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that lie elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _MHA(nn.Module):
    """The four projections under PyTorch's names, and a right split and merge."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)  # (B, T, D)


# ---------------------------------------------------------------- mistakes


class MHASplitHeadLast(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        def split(x: Tensor) -> Tensor:
            B, T, D = x.shape
            return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)  # (B, H, T, Dh)

        def merge(x: Tensor) -> Tensor:
            B, H, T, Dh = x.shape
            return x.permute(0, 2, 3, 1).reshape(B, T, Dh * H)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(merge(weights @ v))


class MHASplitByView(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        def split(x: Tensor) -> Tensor:
            B, T, D = x.shape
            return x.view(B, self.num_heads, T, self.head_dim)  # straight to (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHANoOutProj(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.merge(weights @ v)  # the heads, concatenated


class MHAKeyValueSwapped(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(value))
        v = self.split(self.v_proj(key))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAEverythingFromQuery(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        x = query  # self-attention: query, key and value are the same tensor
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAMaskUnsqueezedAgain(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is not None:
            mask = mask.unsqueeze(1).unsqueeze(2)  # (B, T_k) -> (B, 1, 1, T_k)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHASoftmaxOverHeads(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))
        return self.out_proj(self.merge(weights @ v))


class MHAChunkTime(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        def split(x: Tensor) -> Tensor:
            return torch.stack(x.chunk(self.num_heads, dim=-1), dim=1)  # (B, H, T, Dh)

        def merge(x: Tensor) -> Tensor:
            return torch.cat(x.unbind(dim=1), dim=1)  # back along the time axis

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = merge(weights @ v)  # (B, H * T, Dh)
        return self.out_proj(out.reshape(query.shape))


class MHAReturnsWeightsFirst(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return weights, self.out_proj(self.merge(weights @ v))


class MHAScaledTwice(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        scale = self.head_dim**-0.5
        q = self.split(self.q_proj(query)) * scale  # scale the queries once, up front
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) * scale, mask)
        return self.out_proj(self.merge(weights @ v))


class MHAMergeWithView(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        B, T_q, D = query.shape
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj((weights @ v).transpose(1, 2).view(B, T_q, D))


class MHAScaleByModelWidth(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        d_model = query.shape[-1]
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_model), mask)
        return self.out_proj(self.merge(weights @ v))


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_MHA):
    """One head at a time on its slice of the features, concatenated in order."""

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(self.head_dim)
            head_mask = None
            if mask is not None:
                full = mask.expand(Q.shape[0], self.num_heads, Q.shape[1], K.shape[1])
                head_mask = full[:, h]
            heads.append(_masked_softmax(scores, head_mask) @ V[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumWithWeights(_MHA):
    """einsum on (B, T, H, Dh) views; returns (out, weights)."""

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        B, T_q, D = query.shape
        T_k = key.shape[1]
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).reshape(B, T_q, H, Dh)
        k = self.k_proj(key).reshape(B, T_k, H, Dh)
        v = self.v_proj(value).reshape(B, T_k, H, Dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(Dh)
        weights = _masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T_q, D)
        return self.out_proj(out), weights


class MHAFused(nn.Module):
    """F.scaled_dot_product_attention for the heads; optional dropout, defaults to none."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.num_heads, self.dropout = num_heads, dropout
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        B, T_q, D = query.shape

        def heads(x: Tensor) -> Tensor:
            return x.unflatten(-1, (self.num_heads, -1)).transpose(1, 2)  # (B, H, T, Dh)

        q, k, v = heads(self.q_proj(query)), heads(self.k_proj(key)), heads(self.v_proj(value))
        p = self.dropout if self.training else 0.0
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        else:
            seen = mask.any(-1, keepdim=True)  # a query with no visible key gets zeros
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~seen, dropout_p=p)
            out = out.masked_fill(~seen, 0.0)
        return self.out_proj(out.transpose(1, 2).flatten(-2))


CASES = [
    BlindCase(
        CHECK,
        "split_dh_then_h",
        MHASplitHeadLast,
        "mistake",
        "I viewed the features as (Dh, H) and permuted the last axis to the front, so each head "
        "takes every H-th feature.",
    ),
    BlindCase(
        CHECK,
        "split_by_view_only",
        MHASplitByView,
        "mistake",
        "I split with x.view(B, H, T, Dh) directly, without moving the head axis.",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads and forgot the output projection.",
    ),
    BlindCase(
        CHECK,
        "key_value_swapped",
        MHAKeyValueSwapped,
        "mistake",
        "I projected value with k_proj and key with v_proj.",
    ),
    BlindCase(
        CHECK,
        "all_from_query",
        MHAEverythingFromQuery,
        "mistake",
        "I projected the query three times, as in self-attention, and never used key or value.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_again",
        MHAMaskUnsqueezedAgain,
        "mistake",
        "I turned the mask into (B, 1, 1, T_k) myself with two unsqueezes, though it already "
        "comes broadcastable.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        MHASoftmaxOverHeads,
        "mistake",
        "I took the softmax with dim=1, which in (B, H, T_q, T_k) is the heads.",
    ),
    BlindCase(
        CHECK,
        "chunk_merged_along_time",
        MHAChunkTime,
        "mistake",
        "I split with chunk along the features but merged by concatenating the heads along the "
        "time axis, then reshaped back.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        MHAReturnsWeightsFirst,
        "mistake",
        "I return (weights, out) instead of out or (out, weights).",
    ),
    BlindCase(
        CHECK,
        "scaled_twice",
        MHAScaledTwice,
        "mistake",
        "I scaled the queries by 1/sqrt(Dh) and then the scores again.",
    ),
    BlindCase(
        CHECK,
        "merge_with_view",
        MHAMergeWithView,
        "mistake",
        "I merged with .transpose(1, 2).view(B, T, D), which fails on the non-contiguous tensor.",
    ),
    BlindCase(
        CHECK,
        "scale_sqrt_d_model",
        MHAScaleByModelWidth,
        "mistake",
        "I scaled by 1/sqrt(d_model) instead of 1/sqrt(d_model / num_heads).",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A loop over the heads, each on its slice of the projected features, concatenated in "
        "order before out_proj.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumWithWeights,
        "correct",
        "einsum on (B, T, H, Dh) views without transposes; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "fused_kernel",
        MHAFused,
        "correct",
        "F.scaled_dot_product_attention for the heads, unflatten/flatten for split and merge, "
        "an optional dropout argument defaulting to 0.",
    ),
]
