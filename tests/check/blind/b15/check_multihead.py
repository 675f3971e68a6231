"""Blind set B15, check_multihead (chapter 9): multi-head attention, as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msm(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.dh).transpose(1, 2)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def qkv(self, query, key, value):
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


# ---------------------------------------------------------------- mistakes


class MHAReversedHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = w @ v
        return self.out_proj(torch.cat([out[:, i] for i in reversed(range(self.h))], dim=-1))


class MHASplitDhH(_Base):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # D as (Dh, H)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHASplitNoTranspose(_Base):
    def split(self, x):
        B, T, _ = x.shape
        return x.reshape(B, self.h, T, self.dh)  # straight reshape

    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = w @ v
        B, H, T, Dh = out.shape
        return self.out_proj(out.reshape(B, T, H * Dh))


class MHAScaleD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(self.h * self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = _msm(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAPolarity(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(self.dh), None if mask is None else ~mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), dim=-1)
        return self.out_proj(self.merge(w @ v))


class MHAMinus1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(scores.softmax(-1) @ v))


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, key, value)
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.merge(w @ v)  # the heads' concatenation is the answer


class MHAAllQuery(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.qkv(query, query, query)  # self-attention is all I had in mind
        w = _msm(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHALoop(_Base):
    """A Python loop over the heads' column slices, concatenated in order."""

    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        m = (
            None
            if mask is None
            else mask.expand(query.shape[0], self.h, query.shape[1], key.shape[1])
        )
        heads = []
        for i in range(self.h):
            cols = slice(i * self.dh, (i + 1) * self.dh)
            s = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(self.dh)
            heads.append(_msm(s, None if m is None else m[:, i]) @ v[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumPair(_Base):
    """einsum split with unflatten; returns (out, weights)."""

    def forward(self, query, key, value, mask=None):
        q = self.q_proj(query).unflatten(-1, (self.h, self.dh))  # (B, T, H, Dh)
        k = self.k_proj(key).unflatten(-1, (self.h, self.dh))
        v = self.v_proj(value).unflatten(-1, (self.h, self.dh))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.dh)
        w = _msm(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(-2)
        return self.out_proj(out), w


class MHAPermute(_Base):
    """permute and contiguous().view for the split and merge; extra dropout arg, default 0."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads)
        self.drop = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape

        def split(x):
            return x.view(B, -1, self.h, self.dh).permute(0, 2, 1, 3)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _msm(torch.matmul(q / math.sqrt(self.dh), k.permute(0, 1, 3, 2)), mask)
        out = torch.matmul(self.drop(w), v).permute(0, 2, 1, 3).contiguous().view(B, Tq, D)
        return self.out_proj(out)


CASES = [
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAReversedHeads,
        "mistake",
        "I concatenated the heads in reverse order.",
    ),
    BlindCase(
        CHECK, "split_dh_h", MHASplitDhH, "mistake", "I split D as (Dh, H) instead of (H, Dh)."
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I split with reshape(B, H, T, Dh) directly, without moving the head axis.",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged with reshape(B, T, D) straight from (B, H, T, Dh).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_d",
        MHAScaleD,
        "mistake",
        "I scaled by 1/sqrt(D) instead of 1/sqrt(Dh).",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale."),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAPolarity,
        "mistake",
        "I inverted the mask, as for nn.MultiheadAttention.",
    ),
    BlindCase(CHECK, "mask_unused", MHAMaskUnused, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key sees padding.",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads without out_proj.",
    ),
    BlindCase(
        CHECK,
        "query_used_for_all",
        MHAAllQuery,
        "mistake",
        "I projected query three times, ignoring key and value.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoop,
        "correct",
        "A loop over heads with column slices, concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumPair,
        "correct",
        "unflatten + einsum, returning (out, weights).",
    ),
    BlindCase(
        CHECK,
        "permute_view",
        MHAPermute,
        "correct",
        "permute/contiguous().view; scale on q; extra dropout argument with default 0.",
    ),
]
