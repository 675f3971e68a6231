"""Blind set B13, check_multihead (chapter 9): multi-head attention as readers write it."""

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

    def heads(self, query: Tensor, key: Tensor, value: Tensor) -> tuple:
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)

    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHASplitNoTranspose(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.reshape(B, self.h, T, self.dh)  # straight to the shape I want

    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = w @ v  # (B, H, T, Dh)
        B, _, T, _ = out.shape
        return self.out_proj(out.contiguous().view(B, T, -1))


class MHAScaleByD(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(query.shape[-1]), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskPolarity(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), None if mask is None else ~mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), -1)
        return self.out_proj(self.merge(w @ v))


class MHAFillMinus1e9(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(scores.softmax(-1) @ v))


class MHAHeadsReversed(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        out = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask) @ v
        heads = [out[:, i] for i in range(self.h)]
        return self.out_proj(torch.cat(heads[::-1], dim=-1))  # last head first


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.merge(w @ v)  # the heads are concatenated: done


class MHASoftmaxOverHeads(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=1))
        return self.out_proj(self.merge(w @ v))


class MHAKeyWithQProj(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.q_proj(key))  # copy-paste slip
        v = self.split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAValueNotProjected(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(value)  # values go in as they are
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHAEinsum(_Base):
    def forward(self, query, key, value, mask=None) -> Tensor:
        B, Tq, D = query.shape
        q = self.q_proj(query).view(B, Tq, self.h, self.dh)
        k = self.k_proj(key).view(B, key.shape[1], self.h, self.dh)
        v = self.v_proj(value).view(B, value.shape[1], self.h, self.dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.dh)
        w = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, Tq, D)
        return self.out_proj(out)


class MHALoopHeads(_Base):
    def forward(self, query, key, value, mask=None) -> tuple[Tensor, Tensor]:
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        outs, maps = [], []
        for i in range(self.h):
            sl = slice(i * self.dh, (i + 1) * self.dh)
            m = (
                None
                if mask is None
                else mask.expand(Q.shape[0], self.h, Q.shape[1], K.shape[1])[:, i]
            )
            w = _msoftmax(Q[..., sl] @ K[..., sl].transpose(1, 2) / math.sqrt(self.dh), m)
            outs.append(w @ V[..., sl])
            maps.append(w)
        return self.out_proj(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)


class MHASdpa(_Base):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads)
        self.dropout = dropout

    def forward(self, query, key, value, mask=None, need_weights: bool = False) -> Tensor:
        q, k, v = self.heads(query, key, value)
        p = self.dropout if self.training else 0.0
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        else:
            has_key = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key, dropout_p=p)
            out = out.masked_fill(~has_key, 0.0)  # a query with no key gets nothing
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "split_as_Dh_H",
        MHASplitDhH,
        "mistake",
        "I split D as (Dh, H) with view(B, T, Dh, H) and merged the same way.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I reshaped (B, T, D) straight to (B, H, T, Dh) without a transpose.",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged (B, H, T, Dh) back with view(B, T, -1), no transpose first.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_D",
        MHAScaleByD,
        "mistake",
        "I scaled by sqrt(d_model) instead of sqrt(head_dim).",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale."),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAMaskPolarity,
        "mistake",
        "I treated True as 'blocked', as nn.MultiheadAttention does.",
    ),
    BlindCase(
        CHECK, "mask_unused", MHAMaskUnused, "mistake", "I accepted mask but never applied it."
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled with -1e9, so a query with no visible key attends to the padding.",
    ),
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAHeadsReversed,
        "mistake",
        "I concatenated the heads from a list in reverse order.",
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
        "softmax_over_heads",
        MHASoftmaxOverHeads,
        "mistake",
        "I took the softmax over dim=1, which is the head axis.",
    ),
    BlindCase(
        CHECK,
        "key_with_q_proj",
        MHAKeyWithQProj,
        "mistake",
        "I projected the keys with q_proj (copy-paste).",
    ),
    BlindCase(
        CHECK,
        "value_not_projected",
        MHAValueNotProjected,
        "mistake",
        "I split the values into heads without v_proj.",
    ),
    BlindCase(
        CHECK,
        "einsum_bqhd",
        MHAEinsum,
        "correct",
        "Heads kept as (B, T, H, Dh) and einsum for both products.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads_pair",
        MHALoopHeads,
        "correct",
        "A loop over the heads' column slices, concatenated; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "sdpa_safe_mask",
        MHASdpa,
        "correct",
        "F.scaled_dot_product_attention, rows with no key unmasked then zeroed; extra "
        "dropout and need_weights arguments with defaults.",
    ),
]
