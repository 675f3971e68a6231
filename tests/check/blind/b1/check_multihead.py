"""Blind cases for check_multihead (chapter 9)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.attention import attention, masked_softmax

from .. import BlindCase

CHECK = "check_multihead"


class _Base(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
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


class MHAReversedHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out, _ = attention(q, k, v, mask)
        heads = [out[:, i] for i in range(self.h)]
        return self.out_proj(torch.cat(heads[::-1], dim=-1))  # concatenated last head first


class MHASplitDhH(_Base):
    def split(self, x):
        B, T, D = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # (Dh, H) instead of (H, Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out, _ = attention(q, k, v, mask)
        return self.out_proj(out.permute(0, 2, 3, 1).reshape(query.shape))


class MHASplitNoTranspose(_Base):
    def split(self, x):
        B, T, D = x.shape
        return x.reshape(B, self.h, T, self.dh)  # reshape without moving the head axis

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out, _ = attention(q, k, v, mask)
        return self.out_proj(self.merge(out))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out, _ = attention(q, k, v, mask)  # (B, H, T, Dh)
        return self.out_proj(out.reshape(query.shape))  # merge without transposing back


class MHAScaleD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out, w = attention(
            q, k, v, mask, scale=1 / math.sqrt(query.shape[-1])
        )  # sqrt(D) not sqrt(Dh)
        return self.out_proj(self.merge(out)), w


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out, _ = attention(q, k, v)  # forgot to pass the mask on
        return self.out_proj(self.merge(out))


class MHAMinus1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        out = torch.softmax(scores, -1) @ v
        return self.out_proj(self.merge(out))


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out, _ = attention(q, k, v, mask)
        return self.merge(out)  # out_proj created but never applied


class MHAValueFromKProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-paste: k_proj on the values
        out, _ = attention(q, k, v, mask)
        return self.out_proj(self.merge(out))


class MHAMaskPolarity(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out, _ = attention(q, k, v, None if mask is None else ~mask)
        return self.out_proj(self.merge(out))


class MHASwappedInit(nn.Module):
    def __init__(self, num_heads: int, d_model: int) -> None:  # arguments in the other order
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        sp = lambda x: x.view(B, x.shape[1], self.h, self.dh).transpose(1, 2)  # noqa: E731
        out, _ = attention(
            sp(self.q_proj(query)), sp(self.k_proj(key)), sp(self.v_proj(value)), mask
        )
        return self.out_proj(out.transpose(1, 2).reshape(B, Tq, D))


class MHALoopOverHeads(_Base):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        if mask is not None and mask.dim() == 4:
            masks = [mask[:, min(i, mask.shape[1] - 1)] for i in range(self.h)]
        else:
            masks = [mask] * self.h
        heads = []
        for i in range(self.h):
            sl = slice(i * self.dh, (i + 1) * self.dh)
            out, _ = attention(q[..., sl], k[..., sl], v[..., sl], masks[i])
            heads.append(out)
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumWeights(nn.Module):
    def __init__(
        self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True
    ) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        w = masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(-2)
        return self.out_proj(out), w


class MHASdpa(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            B, H, Tq, Tk = q.shape[0], self.h, q.shape[2], k.shape[2]
            mask = mask.expand(B, H, Tq, Tk)
            seen = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~seen)
            out = out * seen
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "heads_concatenated_reversed",
        MHAReversedHeads,
        "mistake",
        "concatenates the heads' outputs in reverse order before out_proj",
    ),
    BlindCase(
        CHECK,
        "split_dh_then_h",
        MHASplitDhH,
        "mistake",
        "splits D as (Dh, H) with view(B, T, Dh, H) instead of (H, Dh)",
    ),
    BlindCase(
        CHECK,
        "split_reshape_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "splits the heads with reshape(B, H, T, Dh) directly, without view(B, T, H, Dh).transpose(1, 2)",
    ),
    BlindCase(
        CHECK,
        "merge_reshape_without_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "merges the heads with reshape(B, T, D) straight from (B, H, T, Dh), without transposing back",
    ),
    BlindCase(
        CHECK,
        "scale_sqrt_d_model",
        MHAScaleD,
        "mistake",
        "scales the scores by 1/sqrt(D) instead of 1/sqrt(Dh)",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed_on",
        MHAMaskUnused,
        "mistake",
        "forgets to pass the mask to attention",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAMinus1e9,
        "mistake",
        "masks with masked_fill(mask == 0, -1e9) and a plain softmax",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "creates out_proj but returns the concatenated heads without applying it",
    ),
    BlindCase(
        CHECK,
        "values_through_k_proj",
        MHAValueFromKProj,
        "mistake",
        "projects the values with k_proj instead of v_proj (copy-paste)",
    ),
    BlindCase(
        CHECK,
        "mask_polarity_flipped",
        MHAMaskPolarity,
        "mistake",
        "passes ~mask, reading True as blocked like nn.MultiheadAttention",
    ),
    BlindCase(
        CHECK,
        "slip_init_arguments_swapped",
        MHASwappedInit,
        "mistake",
        "writes __init__(self, num_heads, d_model), the two arguments in the other order",
    ),
    BlindCase(
        CHECK,
        "loop_over_head_slices",
        MHALoopOverHeads,
        "correct",
        "loops over the heads, slicing Dh features per head, and concatenates the results in order",
    ),
    BlindCase(
        CHECK,
        "unflatten_einsum_returns_pair",
        MHAEinsumWeights,
        "correct",
        "splits with unflatten, uses einsum on (B, T, H, Dh) without transposing, has dropout/bias defaults and returns (out, weights)",
    ),
    BlindCase(
        CHECK,
        "sdpa_with_empty_row_guard",
        MHASdpa,
        "correct",
        "uses F.scaled_dot_product_attention, letting a row with no visible key see all keys and zeroing its output",
    ),
]
