"""Blind cases for check_multihead (chapter 9), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
from torch import nn

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_multihead"


class _Base(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.dh = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x):
        B, T, D = x.shape
        return x.view(B, T, self.h, self.dh).transpose(1, 2)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def attend(self, q, k, v, mask, scale=None, fill=None):
        s = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
        if fill is not None:
            if mask is not None:
                s = s.masked_fill(~mask, fill)
            return torch.softmax(s, dim=-1) @ v
        return masked_softmax(s, mask) @ v


# ---- mistakes -------------------------------------------------------------------------------


class HeadsReversed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        heads = self.attend(q, k, v, mask)
        return self.out_proj(self.merge(heads.flip(1)))


class SplitAsDhByH(_Base):
    def split(self, x):
        B, T, D = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        return self.out_proj(self.merge(self.attend(q, k, v, mask)))


class SplitWithoutTranspose(_Base):
    def split(self, x):
        B, T, D = x.shape
        return x.view(B, self.h, T, self.dh)  # straight into (B, H, T, Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        return self.out_proj(self.merge(self.attend(q, k, v, mask)))


class MergeWithoutTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out = self.attend(q, k, v, mask)
        B, H, T, Dh = out.shape
        return self.out_proj(out.reshape(B, T, H * Dh))


class ScaleByModelWidth(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        D = query.shape[-1]
        return self.out_proj(self.merge(self.attend(q, k, v, mask, scale=1 / math.sqrt(D))))


class NoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        return self.out_proj(self.merge(self.attend(q, k, v, mask, scale=1.0)))


class MaskInverted(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        return self.out_proj(self.merge(self.attend(q, k, v, None if mask is None else ~mask)))


class MaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        return self.out_proj(self.merge(self.attend(q, k, v, None)))


class FillMinus1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        return self.out_proj(self.merge(self.attend(q, k, v, mask, fill=-1e9)))


class OutProjForgotten(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        return self.merge(self.attend(q, k, v, mask))


class ValuesThroughKeyProjection(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.k_proj(value)),
        )
        return self.out_proj(self.merge(self.attend(q, k, v, mask)))


# ---- reader's slip ------------------------------------------------------------------------------


class SelfAttentionOnly(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        return self.out_proj(self.merge(self.attend(q, k, v, mask)))


# ---- correct variants ---------------------------------------------------------------------------


class LoopOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        B, T_q, _ = q.shape
        T_k = k.shape[1]
        if mask is not None:
            mask = torch.broadcast_to(mask, (B, self.h, T_q, T_k))
        heads = []
        for i in range(self.h):
            part = slice(i * self.dh, (i + 1) * self.dh)
            s = q[..., part] @ k[..., part].transpose(1, 2) / math.sqrt(self.dh)
            w = masked_softmax(s, None if mask is None else mask[:, i])
            heads.append(w @ v[..., part])
        return self.out_proj(torch.cat(heads, dim=-1))


class EinsumNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        T_k = key.shape[1]
        q = self.q_proj(query).view(B, T_q, self.h, self.dh)
        k = self.k_proj(key).view(B, T_k, self.h, self.dh)
        v = self.v_proj(value).view(B, T_k, self.h, self.dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.dh**0.5
        w = masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, T_q, D)
        return self.out_proj(out), w


class FusedWithGuard(_Base):
    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        import torch.nn.functional as F

        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            sees = mask.any(dim=-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~sees)
            out = out.masked_fill(~sees, 0.0)
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "heads_reversed",
        HeadsReversed,
        "mistake",
        "I flipped the head axis before merging, so the heads are concatenated last to first",
    ),
    BlindCase(
        CHECK,
        "split_as_dh_by_h",
        SplitAsDhByH,
        "mistake",
        "I viewed D as (Dh, H) instead of (H, Dh) and moved the H axis forward",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        SplitWithoutTranspose,
        "mistake",
        "I viewed (B, T, D) straight as (B, H, T, Dh) without the transpose",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MergeWithoutTranspose,
        "mistake",
        "I reshaped (B, H, T, Dh) straight to (B, T, D) without moving the head axis back",
    ),
    BlindCase(
        CHECK,
        "scale_by_model_width",
        ScaleByModelWidth,
        "mistake",
        "I scaled by 1/sqrt(D) instead of 1/sqrt(Dh)",
    ),
    BlindCase(CHECK, "no_scale", NoScale, "mistake", "I did not scale the scores at all"),
    BlindCase(
        CHECK, "mask_inverted", MaskInverted, "mistake", "I passed ~mask, reading True as blocked"
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        MaskUnused,
        "mistake",
        "I accepted the mask argument but never passed it on",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        FillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9 and took a plain softmax",
    ),
    BlindCase(
        CHECK,
        "out_proj_forgotten",
        OutProjForgotten,
        "mistake",
        "I returned the concatenated heads without applying out_proj",
    ),
    BlindCase(
        CHECK,
        "values_through_key_projection",
        ValuesThroughKeyProjection,
        "mistake",
        "I projected the values with k_proj instead of v_proj, a copy-paste slip",
    ),
    BlindCase(
        CHECK,
        "self_attention_only",
        SelfAttentionOnly,
        "mistake",
        "my forward takes a single x (and mask) instead of query, key and value",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        LoopOverHeads,
        "correct",
        "I looped over the heads with feature slices and concatenated them with torch.cat",
    ),
    BlindCase(
        CHECK,
        "einsum_no_transpose",
        EinsumNoTranspose,
        "correct",
        "I kept (B, T, H, Dh), used einsum over the head axis, and return (out, weights)",
    ),
    BlindCase(
        CHECK,
        "fused_with_guard",
        FusedWithGuard,
        "correct",
        "I used F.scaled_dot_product_attention, letting queries without keys see everything and zeroing them after",
    ),
]
