"""Blind set B18, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.attention import attention

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Projections(nn.Module):
    """The four layers of the skeleton, shared by the mistakes in ``forward``."""

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
        return x.transpose(1, 2).reshape(B, T, H * Dh)


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_Projections):
    def forward(self, query, key, value, mask=None):
        def split(x):
            B, T, _ = x.shape
            return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)

        def merge(x):
            B, H, T, Dh = x.shape
            return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        out, _ = attention(q, k, v, mask)
        return self.out_proj(merge(out))


class MHASplitWithoutTranspose(_Projections):
    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        T_k = key.shape[1]
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, H, T_q, Dh)  # straight to (B, H, T, Dh)
        k = self.k_proj(key).view(B, H, T_k, Dh)
        v = self.v_proj(value).view(B, H, T_k, Dh)
        out, _ = attention(q, k, v, mask)
        return self.out_proj(self.merge(out))


class MHAMergeWithoutTranspose(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        out, _ = attention(q, k, v, mask)  # (B, H, T_q, Dh)
        B, T_q, D = query.shape
        return self.out_proj(out.reshape(B, T_q, D))  # back to (B, T, D)


class MHAScaleByDModel(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(query.shape[-1])  # sqrt(d_model)
        out = _masked_softmax(scores, mask) @ v
        return self.out_proj(self.merge(out))


class MHANoOutProj(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        out, _ = attention(q, k, v, mask)
        return self.merge(out)  # the heads, concatenated


class MHAMaskTrueBlocks(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        if mask is not None:
            mask = ~mask  # nn.MultiheadAttention: True = ignore
        out, _ = attention(q, k, v, mask)
        return self.out_proj(self.merge(out))


class MHAIgnoresMask(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        out, _ = attention(q, k, v)
        return self.out_proj(self.merge(out))


class MHAStackHeadsLast(_Projections):
    def forward(self, query, key, value, mask=None):
        q_all, k_all, v_all = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        if mask is not None and mask.dim() == 4:
            mask = mask[:, 0]  # (B, 1, 1, T_k) -> (B, 1, T_k) for one head's (B, T_q, T_k)
        heads = []
        for h in range(self.num_heads):
            part = slice(h * self.head_dim, (h + 1) * self.head_dim)
            out, _ = attention(q_all[..., part], k_all[..., part], v_all[..., part], mask)
            heads.append(out)  # (B, T_q, Dh)
        concat = torch.stack(heads, dim=-1).flatten(-2)  # (B, T_q, Dh * H)
        return self.out_proj(concat)


class MHAKeysThroughQProj(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.q_proj(key))
        v = self.split(self.v_proj(value))
        out, _ = attention(q, k, v, mask)
        return self.out_proj(self.merge(out))


class MHASoftmaxOverHeads(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, H, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))
        return self.out_proj(self.merge(weights @ v))


class MHAFillMinus1e9(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = F.softmax(scores, dim=-1)
        return self.out_proj(self.merge(weights @ v)), weights


class MHAReturnsWeightsFirst(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        out, weights = attention(q, k, v, mask)
        return weights, self.out_proj(self.merge(out))


# ---------------------------------------------------------------- correct variants


class MHAReturnsPair(_Projections):
    """The skeleton's layout, returning (out, weights); need_weights as an extra argument."""

    def forward(self, query, key, value, mask=None, need_weights: bool = True):
        q = self.split(self.q_proj(query))
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        out, weights = attention(q, k, v, mask)
        return self.out_proj(self.merge(out)), (weights if need_weights else None)


class MHAHeadLoop(nn.Module):
    """One head at a time on slices of the projections, concatenated in order."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        assert d_model % num_heads == 0
        self.h, self.dh = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=True)
        self.k_proj = nn.Linear(d_model, d_model, bias=True)
        self.v_proj = nn.Linear(d_model, d_model, bias=True)
        self.out_proj = nn.Linear(d_model, d_model, bias=True)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        if mask is not None and mask.dim() == 4:
            B, _, T_q, T_k = mask.shape
            mask = mask.expand(B, self.h, T_q, T_k)  # one mask per head
        heads = []
        for i in range(self.h):
            cols = slice(i * self.dh, (i + 1) * self.dh)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(self.dh)
            head_mask = mask[:, i] if mask is not None and mask.dim() == 4 else mask
            heads.append(_masked_softmax(scores, head_mask) @ V[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAUnflattenSDPA(_Projections):
    """unflatten/flatten for the heads, F.scaled_dot_product_attention for the attention (a
    query with no visible key made safe, then zeroed); returns (out, None) like the book."""

    def forward(self, query, key, value, mask=None):
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1)).transpose(1, 2)
        k = self.k_proj(key).unflatten(-1, (H, -1)).transpose(1, 2)
        v = self.v_proj(value).unflatten(-1, (H, -1)).transpose(1, 2)
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            seen = mask.any(dim=-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~seen)
            out = out.masked_fill(~seen, 0.0)
        return self.out_proj(out.transpose(1, 2).flatten(-2)), None


CASES = [
    BlindCase(
        CHECK,
        "split_as_dh_h",
        MHASplitDhH,
        "mistake",
        "I viewed D as (Dh, H) instead of (H, Dh), so each head takes every H-th feature.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitWithoutTranspose,
        "mistake",
        "I reshaped the projections straight to (B, H, T, Dh) with view, without moving the "
        "head axis.",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeWithoutTranspose,
        "mistake",
        "I merged the heads with out.reshape(B, T, D) straight from (B, H, T, Dh).",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_model",
        MHAScaleByDModel,
        "mistake",
        "I scaled the scores by 1/sqrt(d_model) instead of 1/sqrt(head_dim).",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I defined out_proj but returned the concatenated heads without applying it.",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        MHAMaskTrueBlocks,
        "mistake",
        "I inverted the mask as nn.MultiheadAttention wants, True = ignore.",
    ),
    BlindCase(
        CHECK,
        "ignores_mask",
        MHAIgnoresMask,
        "mistake",
        "I never passed the mask on to the attention.",
    ),
    BlindCase(
        CHECK,
        "heads_stacked_last",
        MHAStackHeadsLast,
        "mistake",
        "I ran the heads in a loop and joined them with torch.stack(dim=-1).flatten(-2), which "
        "interleaves their features.",
    ),
    BlindCase(
        CHECK,
        "keys_through_q_proj",
        MHAKeysThroughQProj,
        "mistake",
        "Copy-paste slip: the keys go through q_proj instead of k_proj.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        MHASoftmaxOverHeads,
        "mistake",
        "I took the softmax over dim=1 of (B, H, T_q, T_k), the heads.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key attends evenly to "
        "the padding.",
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
        "returns_pair_need_weights",
        MHAReturnsPair,
        "correct",
        "Returns (out, weights); an extra need_weights argument with a default.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHAHeadLoop,
        "correct",
        "A loop over the heads on column slices, concatenated in order with torch.cat.",
    ),
    BlindCase(
        CHECK,
        "unflatten_sdpa",
        MHAUnflattenSDPA,
        "correct",
        "unflatten/flatten for the heads and F.scaled_dot_product_attention; returns (out, "
        "None) like the book's module.",
    ),
]
