"""Blind set B14, check_multihead (chapter 9): multi-head attention with q/k/v/out projections."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
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

    def heads(self, query, key, value):
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_Base):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # D as (Dh, H)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, Dh * H)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHASplitNoTranspose(_Base):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, self.h, T, self.dh)  # straight to (B, H, T, Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        out = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask) @ v
        B, H, T, Dh = out.shape
        return self.out_proj(out.reshape(B, T, H * Dh))  # (B, H, T, Dh) -> (B, T, D)


class MHAScaleByD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(query.shape[-1]), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskPolarity(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        w = _msoftmax(scores, None if mask is None else mask.logical_not())
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), dim=-1)
        return self.out_proj(self.merge(w @ v))


class MHAMinus1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(scores.softmax(-1) @ v))


class MHAHeadsReversed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        heads = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask) @ v
        outs = [heads[:, i] for i in range(self.h)]
        return self.out_proj(torch.cat(outs[::-1], dim=-1))  # last head first


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.merge(w @ v)  # the heads concatenated are the output


class MHAQueryForValues(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, _ = self.heads(query, key, value)
        v = self.split(self.v_proj(key))  # key and value are the same tensor anyway
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHALoop(_Base):
    """A Python loop over the heads, each one a slice of the features."""

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        if mask is not None and mask.dim() == 4:
            mask = mask.expand(-1, self.h, -1, -1) if mask.shape[1] == 1 else mask
        outs = []
        for i in range(self.h):
            cols = slice(i * self.dh, (i + 1) * self.dh)
            m = None
            if mask is not None:
                m = mask[:, i] if mask.dim() == 4 else mask
            scores = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(self.dh)
            outs.append(_msoftmax(scores, m) @ v[..., cols])
        return self.out_proj(torch.cat(outs, dim=-1))


class MHAEinsumPair(_Base):
    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        q = self.q_proj(query).unflatten(-1, (self.h, self.dh))  # (B, T, H, Dh)
        k = self.k_proj(key).unflatten(-1, (self.h, self.dh))
        v = self.v_proj(value).unflatten(-1, (self.h, self.dh))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.dh**0.5
        w = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(-2)
        return self.out_proj(out), w  # (out, weights)


class MHAPermute(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape

        def split(x: Tensor) -> Tensor:
            return x.reshape(B, -1, self.h, self.dh).permute(0, 2, 1, 3)

        q = split(self.q_proj(query)) * self.dh**-0.5
        k, v = split(self.k_proj(key)), split(self.v_proj(value))
        w = _msoftmax(torch.matmul(q, k.permute(0, 1, 3, 2)), mask)
        out = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous().view(B, Tq, D)
        return self.out_proj(out), None


CASES = [
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as (Dh, H) and merged back the same way.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I split with view(B, H, T, Dh) directly, without moving the head axis.",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged (B, H, T, Dh) with reshape(B, T, D) without transposing back.",
    ),
    BlindCase(
        CHECK, "scale_by_D", MHAScaleByD, "mistake", "I scaled by 1/sqrt(D) instead of 1/sqrt(Dh)."
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale."),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAMaskPolarity,
        "mistake",
        "I inverted the mask (True = blocked, as in nn.MultiheadAttention).",
    ),
    BlindCase(CHECK, "mask_unused", MHAMaskUnused, "mistake", "I never applied the mask."),
    BlindCase(
        CHECK,
        "minus_1e9",
        MHAMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key attends to the padding.",
    ),
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAHeadsReversed,
        "mistake",
        "I concatenated the heads in reverse order.",
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
        "values_from_key",
        MHAQueryForValues,
        "mistake",
        "I projected the values from key instead of value, as they are equal in self-attention.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoop,
        "correct",
        "A Python loop over the heads, each a slice of the projected features.",
    ),
    BlindCase(
        CHECK,
        "einsum_pair",
        MHAEinsumPair,
        "correct",
        "unflatten and einsum; returns (out, weights); extra need_weights argument.",
    ),
    BlindCase(
        CHECK,
        "permute_scaled_q",
        MHAPermute,
        "correct",
        "reshape/permute, the scale on q; returns (out, None) like the book.",
    ),
]
