"""Blind set B34, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has, 0.0)
    return scores.softmax(-1).masked_fill(~has, 0.0)


class _Base(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.dh = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.dh).transpose(1, 2)  # (B, H, T, Dh)

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


class MHAScaleD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.h * self.dh), mask)  # sqrt(D)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHASplitNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        Tk = key.shape[1]
        q = self.q_proj(query).reshape(B, self.h, Tq, self.dh)  # straight to (B, H, T, Dh)
        k = self.k_proj(key).reshape(B, self.h, Tk, self.dh)
        v = self.v_proj(value).reshape(B, self.h, Tk, self.dh)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = w @ v  # (B, H, T, Dh)
        return self.out_proj(out.reshape(query.shape))  # back to (B, T, D)


class MHASplitDhH(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, Dh * H)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAHeadsReversed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        heads = list((w @ v).unbind(1))  # H x (B, T, Dh)
        return self.out_proj(torch.cat(heads[::-1], dim=-1))


class MHAMaskPolarity(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), None if mask is None else ~mask)
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
            scores = scores.masked_fill(~mask, -1e9)
        return self.out_proj(self.merge(scores.softmax(-1) @ v))


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.merge(w @ v)  # the heads are already concatenated


class MHAKeyAsValue(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, _ = self.heads(query, key, value)
        v = self.split(self.v_proj(key))  # key and value are the same tensor in self-attention
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHASoftmaxHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=1))  # dim 1 after the batch
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnsqueezedWrong(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHAEinops(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        q = self.q_proj(query).unflatten(-1, (self.h, self.dh))  # (B, T, H, Dh)
        k = self.k_proj(key).unflatten(-1, (self.h, self.dh))
        v = self.v_proj(value).unflatten(-1, (self.h, self.dh))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.dh)
        w = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(-2)
        return self.out_proj(out), w


class MHALoopHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        outs = []
        for h in range(self.h):
            sl = slice(h * self.dh, (h + 1) * self.dh)
            m = None
            if mask is not None:
                m = mask if mask.dim() < 4 else mask[:, min(h, mask.shape[1] - 1)]
            scores = q[..., sl] @ k[..., sl].transpose(-2, -1) / math.sqrt(self.dh)
            outs.append(_msoftmax(scores, m) @ v[..., sl])
        return self.out_proj(torch.cat(outs, dim=-1))


class MHASdpa(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            mask = mask.expand(q.shape[0], self.h, q.shape[2], k.shape[2])
            has = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has)
            out = out.masked_fill(~has, 0.0)  # no visible key: zero output
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "scale_sqrt_D",
        MHAScaleD,
        "mistake",
        "I scaled by sqrt(d_model) instead of sqrt(head_dim)",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale"),
    BlindCase(
        CHECK,
        "split_reshape_only",
        MHASplitNoTranspose,
        "mistake",
        "I reshaped straight to (B, H, T, Dh) without the transpose",
    ),
    BlindCase(
        CHECK,
        "merge_reshape_only",
        MHAMergeNoTranspose,
        "mistake",
        "I reshaped (B, H, T, Dh) back to (B, T, D) without moving the head axis",
    ),
    BlindCase(
        CHECK, "split_as_dh_h", MHASplitDhH, "mistake", "I viewed D as (Dh, H) instead of (H, Dh)"
    ),
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAHeadsReversed,
        "mistake",
        "I concatenated the heads in reverse order",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        MHAMaskPolarity,
        "mistake",
        "I passed ~mask, as nn.MultiheadAttention wants",
    ),
    BlindCase(CHECK, "mask_unused", MHAMaskUnused, "mistake", "I never used the mask"),
    BlindCase(
        CHECK, "fill_minus_1e9", MHAMinus1e9, "mistake", "I filled the masked scores with -1e9"
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads without out_proj",
    ),
    BlindCase(
        CHECK,
        "values_from_key",
        MHAKeyAsValue,
        "mistake",
        "I projected the key tensor for the values",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        MHASoftmaxHeads,
        "mistake",
        "I took the softmax over dim=1, which is the heads",
    ),
    BlindCase(
        CHECK,
        "mask_extra_head_axis",
        MHAMaskUnsqueezedWrong,
        "mistake",
        "I unsqueezed the mask at dim 1 to add a head axis, though it already had one",
    ),
    BlindCase(
        CHECK,
        "einsum_unflatten",
        MHAEinops,
        "correct",
        "I used unflatten and einsum and also return the weights",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopHeads,
        "correct",
        "I looped over the heads with slices and concatenated in order",
    ),
    BlindCase(
        CHECK,
        "sdpa_guarded",
        MHASdpa,
        "correct",
        "I used F.scaled_dot_product_attention and zeroed queries with no visible key",
    ),
]
