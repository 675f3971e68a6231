"""Blind set B25, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

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
    """The four layers under PyTorch's names and the right split and merge."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.d_head = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_head).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def heads(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


# ---------------------------------------------------------------- mistakes


class MHAKeysWithQueryProj(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.q_proj(key))  # copied the line above
        v = self.split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(w @ v))


class MHAValuesFromKey(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, key)  # key and value are the same tensor anyway
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoOutProj(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.merge(w @ v)  # the heads concatenated are the output


class MHAMaskUnsqueezed(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(w @ v))


class MHALengthFromQuery(_Projections):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape

        def split(x: Tensor) -> Tensor:
            return x.view(B, T, self.h, self.d_head).transpose(1, 2)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj((w @ v).transpose(1, 2).reshape(B, T, D))


class MHAScaleByModel(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(query.shape[-1]), mask)
        return self.out_proj(self.merge(w @ v))


class MHASplitHeadLast(_Projections):
    def forward(self, query, key, value, mask=None):
        def split(x: Tensor) -> Tensor:
            B, T, _ = x.shape
            return x.view(B, T, self.d_head, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeWithoutTranspose(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = w @ v  # (B, H, T, Dh)
        B, T = query.shape[:2]
        return self.out_proj(out.reshape(B, T, -1))


class MHASplitWithoutTranspose(_Projections):
    def forward(self, query, key, value, mask=None):
        def split(x: Tensor) -> Tensor:
            B, T, _ = x.shape
            return x.reshape(B, self.h, T, self.d_head)  # straight to (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskInverted(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        blocked = None if mask is None else ~mask  # nn.MultiheadAttention's convention
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), blocked)
        return self.out_proj(self.merge(w @ v))


class MHAFillMinus1e9(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(torch.softmax(scores, -1) @ v))


class MHASoftmaxOverQueries(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(scores, dim=-2))
        return self.out_proj(self.merge(w @ v))


class MHAHeadsPrepended(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        Dh = self.d_head
        outs: list[Tensor] = []
        for h in range(self.h):
            cols = slice(h * Dh, (h + 1) * Dh)
            scores = q[..., cols].unsqueeze(1) @ k[..., cols].unsqueeze(1).transpose(-2, -1)
            w = _masked_softmax(scores / math.sqrt(Dh), mask)  # (B, 1, T_q, T_k)
            outs.insert(0, (w @ v[..., cols].unsqueeze(1)).squeeze(1))  # each head in front
        return self.out_proj(torch.cat(outs, dim=-1))


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_Projections):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)  # (B, T, D)
        Dh = self.d_head
        if mask is not None:
            mask = mask.expand(query.shape[0], self.h, query.shape[1], key.shape[1])
        outs = []
        for h in range(self.h):
            cols = slice(h * Dh, (h + 1) * Dh)
            scores = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(Dh)
            w = _masked_softmax(scores, None if mask is None else mask[:, h])
            outs.append(w @ v[..., cols])
        return self.out_proj(torch.cat(outs, dim=-1))


class MHAEinsumNoTranspose(_Projections):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        Tk = key.shape[1]
        q = self.q_proj(query).view(B, Tq, self.h, self.d_head)
        k = self.k_proj(key).view(B, Tk, self.h, self.d_head)
        v = self.v_proj(value).view(B, Tk, self.h, self.d_head)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.d_head**0.5
        w = _masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, Tq, D)
        return self.out_proj(out), w


class MHASdpa(_Projections):
    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        q, k, v = self.heads(query, key, value)
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            mask = mask.expand(q.shape[0], self.h, q.shape[2], k.shape[2])
            has_key = mask.any(dim=-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
            out = out.masked_fill(~has_key, 0.0)
        return self.out_proj(self.merge(out)), None


class MHAUnflattenMovedim(_Projections):
    def forward(self, query, key, value, mask=None):
        def split(x: Tensor) -> Tensor:
            return x.unflatten(-1, (self.h, self.d_head)).movedim(-2, 1)

        q = split(self.q_proj(query)) * self.d_head**-0.5
        k, v = split(self.k_proj(key)), split(self.v_proj(value))
        scores = q @ k.mT
        if mask is not None:
            low = torch.finfo(scores.dtype).min
            scores = torch.where(mask, scores, torch.full_like(scores, low))
        w = scores.softmax(-1)
        if mask is not None:
            w = torch.where(mask, w, torch.zeros_like(w))
        return self.out_proj((w @ v).movedim(1, -2).flatten(-2))


CASES = [
    BlindCase(
        CHECK,
        "keys_with_q_proj",
        MHAKeysWithQueryProj,
        "mistake",
        "I copied the query line and projected the keys with q_proj too.",
    ),
    BlindCase(
        CHECK,
        "values_from_key",
        MHAValuesFromKey,
        "mistake",
        "I projected key instead of value for v, since they are the same tensor in self-attention.",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads and never applied out_proj.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_for_heads",
        MHAMaskUnsqueezed,
        "mistake",
        "I always added a head axis with mask.unsqueeze(1), so a mask already shaped "
        "(B, 1, 1, T_k) no longer lines up.",
    ),
    BlindCase(
        CHECK,
        "length_from_query",
        MHALengthFromQuery,
        "mistake",
        "I split keys and values with the query's length T, which breaks when T_k differs.",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_model",
        MHAScaleByModel,
        "mistake",
        "I scaled by 1/sqrt(d_model) instead of 1/sqrt(d_head).",
    ),
    BlindCase(
        CHECK,
        "split_d_head_then_heads",
        MHASplitHeadLast,
        "mistake",
        "I viewed D as (Dh, H) and permuted, so each head takes every H-th feature.",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeWithoutTranspose,
        "mistake",
        "I merged the heads with reshape(B, T, -1) straight from (B, H, T, Dh).",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitWithoutTranspose,
        "mistake",
        "I split with reshape(B, H, T, Dh) straight from (B, T, D), without a transpose.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        MHAMaskInverted,
        "mistake",
        "I inverted the mask, following nn.MultiheadAttention's True = blocked.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9 and took the plain softmax.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2 of the (B, H, T_q, T_k) scores.",
    ),
    BlindCase(
        CHECK,
        "heads_prepended",
        MHAHeadsPrepended,
        "mistake",
        "In my loop over the heads I put each head's output in front of the list with insert(0, "
        "...), so the heads are concatenated last to first.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A Python loop over the heads with feature slices h*Dh:(h+1)*Dh, concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumNoTranspose,
        "correct",
        "Heads kept as (B, T, H, Dh) and einsum for both products; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "sdpa_returns_none_weights",
        MHASdpa,
        "correct",
        "F.scaled_dot_product_attention (empty rows opened, then zeroed); returns (out, None) "
        "and takes an extra need_weights argument.",
    ),
    BlindCase(
        CHECK,
        "unflatten_movedim",
        MHAUnflattenMovedim,
        "correct",
        "unflatten and movedim for the split and merge, q scaled first, the dtype's lowest "
        "number as the fill.",
    ),
]
