"""Blind cases for check_multihead (chapter 9), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import BlindCase

CHECK = "check_multihead"


def _softmax(scores, mask):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _Layers(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.d_model, self.num_heads = d_model, num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)


class SplitDhThenH(_Layers):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, Dh * H)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MergeWithoutTranspose(_Layers):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = weights @ v  # (B, H, T_q, Dh)
        B, T_q = query.shape[:2]
        return self.out_proj(out.reshape(B, T_q, self.d_model))


class ScaleByModelWidth(_Layers):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_model), mask)
        return self.out_proj(self.merge(weights @ v))


class SplitWithQueryLength(_Layers):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        H, Dh = self.num_heads, self.head_dim

        def split(x):
            return x.reshape(B, T, H, Dh).transpose(1, 2)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(Dh), mask)
        return self.out_proj((weights @ v).transpose(1, 2).reshape(B, T, D))


class NoOutProj(_Layers):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.merge(weights @ v)  # the heads, concatenated


class ValuesThroughKProj(_Layers):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.k_proj(value)),
        )
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MaskTrueHides(_Layers):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return self.out_proj(self.merge(weights @ v))


class EinsumHeads(_Layers):
    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        T_k, H, Dh = key.shape[1], self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, T_q, H, Dh)
        k = self.k_proj(key).view(B, T_k, H, Dh)
        v = self.v_proj(value).view(B, T_k, H, Dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(Dh)
        weights = _softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T_q, D)
        return self.out_proj(out)


class LoopOverHeads(_Layers):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        Dh = self.head_dim
        heads, all_weights = [], []
        for h in range(self.num_heads):
            cols = slice(h * Dh, (h + 1) * Dh)
            scores = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(Dh)  # (B, T_q, T_k)
            head_mask = None
            if mask is not None:
                B, T_q, T_k = scores.shape
                head_mask = mask.broadcast_to(B, self.num_heads, T_q, T_k)[:, h]
            w = _softmax(scores, head_mask)
            all_weights.append(w)
            heads.append(self.dropout(w) @ v[..., cols])
        out = self.out_proj(torch.cat(heads, dim=-1))
        return out, torch.stack(all_weights, dim=1)


CASES = [
    BlindCase(
        CHECK,
        "split_dh_then_h",
        SplitDhThenH,
        "mistake",
        "I viewed D as (Dh, H) and permuted the H axis forward (and back the same way)",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MergeWithoutTranspose,
        "mistake",
        "I merged the heads with reshape(B, T, D) straight from (B, H, T, Dh)",
    ),
    BlindCase(
        CHECK,
        "scale_by_model_width",
        ScaleByModelWidth,
        "mistake",
        "I scaled by sqrt(d_model) as in one-head attention, not sqrt(Dh)",
    ),
    BlindCase(
        CHECK,
        "split_with_query_length",
        SplitWithQueryLength,
        "mistake",
        "my split helper reshapes with T taken from the query, also for keys and values",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        NoOutProj,
        "mistake",
        "I created out_proj but returned the concatenated heads without it",
    ),
    BlindCase(
        CHECK,
        "values_through_k_proj",
        ValuesThroughKProj,
        "mistake",
        "I projected the values with k_proj (copy-paste from the keys' line)",
    ),
    BlindCase(
        CHECK,
        "mask_true_hides",
        MaskTrueHides,
        "mistake",
        "I filled -inf where the mask is True, as nn.MultiheadAttention does, and NaN -> 0",
    ),
    BlindCase(
        CHECK,
        "einsum_heads",
        EinsumHeads,
        "correct",
        "I kept the (B, T, H, Dh) layout and wrote both products with einsum",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        LoopOverHeads,
        "correct",
        "a Python loop over column slices, one per head, concatenated in order; returns (out, weights)",
    ),
]
