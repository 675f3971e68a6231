"""Blind cases for check_multihead (chapter 9), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import nn

from transformer_tutorial.attention import attention, masked_softmax

from .. import BlindCase

CHECK = "check_multihead"


class _Base(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.d_h = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x):
        B, T, D = x.shape
        return x.view(B, T, self.h, self.d_h).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def heads(self, query, key, value):
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


class SplitDhThenH(_Base):
    def split(self, x):
        B, T, D = x.shape
        return x.view(B, T, self.d_h, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, Dh * H)

    def forward(self, query, key, value, mask=None):
        out, _ = attention(*self.heads(query, key, value), mask)
        return self.out_proj(self.merge(out))


class SplitWithoutTranspose(_Base):
    def split(self, x):
        B, T, D = x.shape
        return x.view(B, self.h, T, self.d_h)

    def forward(self, query, key, value, mask=None):
        out, _ = attention(*self.heads(query, key, value), mask)
        return self.out_proj(self.merge(out))


class MergeWithoutTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        out, _ = attention(*self.heads(query, key, value), mask)  # (B, H, T_q, Dh)
        B, H, T, Dh = out.shape
        return self.out_proj(out.reshape(B, T, H * Dh))


class ScaleByModelWidth(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        D = query.shape[-1]
        out, _ = attention(q, k, v, mask, scale=1 / math.sqrt(D))
        return self.out_proj(self.merge(out))


class NoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        weights = masked_softmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(weights @ v))


class MaskPolarityFlipped(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_h)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # as nn.MultiheadAttention does
        weights = torch.softmax(scores, dim=-1)
        return self.out_proj(self.merge(weights @ v))


class Minus1e9Fill(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_h)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        return self.out_proj(self.merge(torch.softmax(scores, dim=-1) @ v))


class MaskNeverUsed(_Base):
    def forward(self, query, key, value, mask=None):
        out, _ = attention(*self.heads(query, key, value))
        return self.out_proj(self.merge(out))


class NoOutputProjection(_Base):
    def forward(self, query, key, value, mask=None):
        out, _ = attention(*self.heads(query, key, value), mask)
        return self.merge(out)


class ValuesThroughKeyProjection(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-paste: k_proj for the values
        out, _ = attention(q, k, v, mask)
        return self.out_proj(self.merge(out))


class KeysFromQuery(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(query))  # as in self-attention, where query is key
        v = self.split(self.v_proj(value))
        out, _ = attention(q, k, v, mask)
        return self.out_proj(self.merge(out))


class PaddingMaskReshaped(_Base):
    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.view(mask.shape[0], 1, 1, -1)  # (B, T_k) padding -> (B, 1, 1, T_k)
        out, _ = attention(*self.heads(query, key, value), mask)
        return self.out_proj(self.merge(out))


class LoopOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        B, T_q, T_k = query.shape[0], query.shape[1], key.shape[1]
        if mask is not None:
            mask = torch.broadcast_to(mask, (B, self.h, T_q, T_k))
        head_masks = [None if mask is None else mask[:, h] for h in range(self.h)]
        outs = []
        for h in range(self.h):
            cols = slice(h * self.d_h, (h + 1) * self.d_h)
            out_h, _ = attention(q[..., cols], k[..., cols], v[..., cols], head_masks[h])
            outs.append(out_h)
        return self.out_proj(torch.cat(outs, dim=-1))


class EinsumWithWeights(_Base):
    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        T_k = key.shape[1]
        q = self.q_proj(query).reshape(B, T_q, self.h, self.d_h)
        k = self.k_proj(key).reshape(B, T_k, self.h, self.d_h)
        v = self.v_proj(value).reshape(B, T_k, self.h, self.d_h)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.d_h)
        weights = masked_softmax(scores, mask)  # (B, H, T_q, T_k)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T_q, D)
        return self.out_proj(out), weights


class UnflattenAndFlatten(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % num_heads:
            raise ValueError("d_model must be divisible by num_heads")
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=True)
        self.k_proj = nn.Linear(d_model, d_model, bias=True)
        self.v_proj = nn.Linear(d_model, d_model, bias=True)
        self.out_proj = nn.Linear(d_model, d_model, bias=True)
        self.dropout = dropout

    def _split(self, x):
        return x.unflatten(-1, (self.num_heads, -1)).transpose(-3, -2)  # (B, H, T, Dh)

    def forward(self, query, key, value, mask=None):
        q = self._split(self.q_proj(query))
        k = self._split(self.k_proj(key))
        v = self._split(self.v_proj(value))
        p = self.dropout if self.training else 0.0
        out, _ = attention(q, k, v, mask, dropout_p=p)
        return self.out_proj(out.transpose(-3, -2).flatten(-2))


CASES = [
    BlindCase(
        CHECK,
        "split_dh_then_h",
        SplitDhThenH,
        "mistake",
        "I split D as view(B, T, Dh, H) and permuted, so each head takes every H-th feature "
        "(D split as (Dh, H) instead of (H, Dh))",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        SplitWithoutTranspose,
        "mistake",
        "I split the heads with view(B, H, T, Dh) directly, without moving the head axis",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MergeWithoutTranspose,
        "mistake",
        "I merged the heads with reshape(B, T, H * Dh) straight from (B, H, T, Dh), without "
        "transposing back first",
    ),
    BlindCase(
        CHECK,
        "scale_by_model_width",
        ScaleByModelWidth,
        "mistake",
        "I scaled the scores by 1/sqrt(D), the model width, instead of 1/sqrt(Dh)",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        NoScale,
        "mistake",
        "I forgot to scale the scores at all",
    ),
    BlindCase(
        CHECK,
        "mask_polarity_flipped",
        MaskPolarityFlipped,
        "mistake",
        "I filled -inf where the mask is True, nn.MultiheadAttention's polarity",
    ),
    BlindCase(
        CHECK,
        "minus_1e9_fill",
        Minus1e9Fill,
        "mistake",
        "I filled masked scores with -1e9, so a query that sees no key attends to the padding "
        "evenly instead of giving zeros",
    ),
    BlindCase(
        CHECK,
        "mask_never_used",
        MaskNeverUsed,
        "mistake",
        "I forgot to pass the mask on to the attention",
    ),
    BlindCase(
        CHECK,
        "no_output_projection",
        NoOutputProjection,
        "mistake",
        "I returned the concatenated heads without applying out_proj",
    ),
    BlindCase(
        CHECK,
        "values_through_key_projection",
        ValuesThroughKeyProjection,
        "mistake",
        "I projected the values with k_proj instead of v_proj (copy-paste)",
    ),
    BlindCase(
        CHECK,
        "keys_from_query",
        KeysFromQuery,
        "mistake",
        "I projected the keys from the query tensor instead of the key tensor (only right in "
        "self-attention, where they are the same)",
    ),
    BlindCase(
        CHECK,
        "padding_mask_reshaped",
        PaddingMaskReshaped,
        "mistake",
        "I reshaped every mask with view(B, 1, 1, -1), as if it were a (B, T_k) padding mask; "
        "that scrambles any mask with a query axis",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        LoopOverHeads,
        "correct",
        "a Python loop over the heads, each attending on its slice of Dh columns, then "
        "torch.cat of the heads in order",
    ),
    BlindCase(
        CHECK,
        "einsum_with_weights",
        EinsumWithWeights,
        "correct",
        "einsum over (B, T, H, Dh) tensors without transposing, and I return (out, weights)",
    ),
    BlindCase(
        CHECK,
        "unflatten_and_flatten",
        UnflattenAndFlatten,
        "correct",
        "unflatten/flatten for the split and merge, and an extra dropout argument (0 by default)",
    ),
]
