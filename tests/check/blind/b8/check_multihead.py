"""Blind set B8, check_multihead (chapter 9): multi-head attention with q/k/v/out projections."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h, self.d_h = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_h).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)


# ---------------------------------------------------------------- mistakes


class SplitDhThenH(_Base):
    def forward(self, query, key, value, mask=None):
        def split(x):
            B, T, _ = x.shape
            return x.view(B, T, self.d_h, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_h), mask)
        return self.out_proj(self.merge(w @ v))


class SplitViewWithoutTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        def split(x):
            B, T, _ = x.shape
            return x.view(B, self.h, T, self.d_h)  # reshaped straight to (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_h), mask)
        return self.out_proj(self.merge(w @ v))


class MergeReshapeWithoutTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_h), mask)
        out = w @ v  # (B, H, T_q, Dh)
        B, _, T_q, _ = out.shape
        return self.out_proj(out.reshape(B, T_q, -1))


class ScaleByDModel(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(query.shape[-1]), mask)
        return self.out_proj(self.merge(w @ v))


class MaskFilledWhereTrue(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_h)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(scores, dim=-1))
        return self.out_proj(self.merge(w @ v))


class MinusBillionFill(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_h)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(torch.softmax(scores, dim=-1) @ v))


class ValuesThroughKProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(
                self.k_proj(value)  # copy-paste: k_proj for the values
            ),
        )
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_h), mask)
        return self.out_proj(self.merge(w @ v))


class OutProjForgotten(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_h), mask)
        return self.merge(w @ v)


class KeysFromQueryTensor(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(query)),
            self.split(self.v_proj(value)),
        )  # keys projected from the query input: fine only in self-attention
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_h), mask)
        return self.out_proj(self.merge(w @ v))


class SoftmaxOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_h)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(scores, dim=1))  # (B, H, T_q, T_k): dim 1 = heads
        return self.out_proj(self.merge(w @ v))


class MaskNotUsed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_h), dim=-1)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class LoopOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for i in range(self.h):
            cols = slice(i * self.d_h, (i + 1) * self.d_h)
            m = None
            if mask is not None:
                m = mask if mask.dim() < 4 else mask[:, i if mask.shape[1] > 1 else 0]
            scores = q[..., cols] @ k[..., cols].transpose(-2, -1) / math.sqrt(self.d_h)
            heads.append(_msoftmax(scores, m) @ v[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class FusedSdpaPair(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # True = may attend
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_h), mask)
        return self.out_proj(self.merge(out)), weights


class EinsumHeads(_Base):
    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        T_k = key.shape[1]
        q = self.q_proj(query).reshape(B, T_q, self.h, self.d_h)
        k = self.k_proj(key).reshape(B, T_k, self.h, self.d_h)
        v = self.v_proj(value).reshape(B, T_k, self.h, self.d_h)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.d_h**0.5
        w = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, T_q, D)
        return self.out_proj(out)


CASES = [
    BlindCase(
        CHECK,
        "split_dh_then_h",
        SplitDhThenH,
        "mistake",
        "I split D as view(B, T, Dh, H) and permuted the heads forward, instead of (H, Dh)",
    ),
    BlindCase(
        CHECK,
        "split_view_without_transpose",
        SplitViewWithoutTranspose,
        "mistake",
        "I split the heads with view(B, H, T, Dh) directly, without view(B, T, H, Dh) "
        "and transpose",
    ),
    BlindCase(
        CHECK,
        "merge_reshape_without_transpose",
        MergeReshapeWithoutTranspose,
        "mistake",
        "I merged the heads with reshape(B, T, D) straight from (B, H, T, Dh), without "
        "transposing back",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_model",
        ScaleByDModel,
        "mistake",
        "I scaled the scores by sqrt(d_model) instead of sqrt(d_head)",
    ),
    BlindCase(
        CHECK,
        "mask_filled_where_true",
        MaskFilledWhereTrue,
        "mistake",
        "I used masked_fill(mask, -inf), hiding the keys where the mask is True",
    ),
    BlindCase(
        CHECK,
        "minus_billion_fill",
        MinusBillionFill,
        "mistake",
        "I filled masked scores with -1e9 (The Annotated Transformer's way)",
    ),
    BlindCase(
        CHECK,
        "values_through_k_proj",
        ValuesThroughKProj,
        "mistake",
        "copy-paste slip: I projected the values with k_proj",
    ),
    BlindCase(
        CHECK,
        "out_proj_forgotten",
        OutProjForgotten,
        "mistake",
        "I returned the concatenated heads and forgot out_proj",
    ),
    BlindCase(
        CHECK,
        "keys_from_query_tensor",
        KeysFromQueryTensor,
        "mistake",
        "I computed k_proj(query) instead of k_proj(key); it only works when query is key",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        SoftmaxOverHeads,
        "mistake",
        "I wrote softmax(dim=1), which on (B, H, T_q, T_k) is the heads axis",
    ),
    BlindCase(
        CHECK,
        "mask_not_used",
        MaskNotUsed,
        "mistake",
        "I accepted the mask argument but never applied it",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        LoopOverHeads,
        "correct",
        "a Python loop over heads on column slices, concatenated in order",
    ),
    BlindCase(
        CHECK,
        "fused_sdpa_pair",
        FusedSdpaPair,
        "correct",
        "F.scaled_dot_product_attention for the output, returns (out, weights)",
    ),
    BlindCase(
        CHECK,
        "einsum_heads",
        EinsumHeads,
        "correct",
        "heads kept as (B, T, H, Dh) with einsum, no transposes",
    ),
]
