"""Blind set B24, check_multihead (chapter 9): multi-head attention as readers write it."""

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
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


class _MHA(nn.Module):
    """The book's four layers and a right split/merge; each case changes one piece."""

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
        return x.transpose(1, 2).reshape(B, T, H * Dh)  # (B, T, D)

    def heads(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_MHA):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.d_head, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(weights @ v))


class MHASplitNoTranspose(_MHA):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.reshape(B, self.h, T, self.d_head)  # straight to (B, H, T, Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAMergeNoTranspose(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = weights @ v  # (B, H, T, Dh)
        return self.out_proj(out.reshape(query.shape))  # back to (B, T, D)


class MHAMergeInterleaved(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        out = (weights @ v).permute(0, 2, 3, 1)  # (B, T, Dh, H)
        return self.out_proj(out.flatten(2))


class MHAScaleByD(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        d_model = self.h * self.d_head
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(d_model), mask)
        return self.out_proj(self.merge(weights @ v))


class MHANoScale(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        weights = _msoftmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAMaskPolarity(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # hide where the mask is True
        weights = torch.nan_to_num(scores.softmax(-1))
        return self.out_proj(self.merge(weights @ v))


class MHAMaskUnused(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), dim=-1)
        return self.out_proj(self.merge(weights @ v))


class MHAFillMinus1e9(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = F.softmax(scores, dim=-1)
        return self.out_proj(self.merge(weights @ v))


class MHANoOutProj(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.merge(weights @ v)  # the heads, concatenated


class MHAValuesThroughKProj(_MHA):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(weights @ v))


class MHASoftmaxDim1(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # as in chapter 8's (B, T, T)
        return self.out_proj(self.merge(weights @ v))


class MHASelfOnly(_MHA):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x, x, x)
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(weights @ v))


# ---------------------------------------------------------------- correct variants


class MHAEinsum(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        B, T_q, D = query.shape
        q = self.q_proj(query).view(B, T_q, self.h, self.d_head)
        k = self.k_proj(key).view(B, key.shape[1], self.h, self.d_head)
        v = self.v_proj(value).view(B, value.shape[1], self.h, self.d_head)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.d_head)
        weights = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T_q, D)
        return self.out_proj(out), weights


class MHAHeadLoop(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        B, T_q, T_k = query.shape[0], query.shape[1], key.shape[1]
        if mask is not None:
            mask = torch.broadcast_to(mask, (B, self.num_heads, T_q, T_k))  # a slice per head
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / self.head_dim**0.5
            m = None if mask is None else mask[:, h]
            heads.append(_msoftmax(scores, m) @ V[..., cols])  # (B, T_q, Dh)
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAChunkSdpa(_MHA):
    def split(self, x: Tensor) -> Tensor:
        return torch.stack(x.chunk(self.h, dim=-1), dim=1)  # (B, H, T, Dh)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = self.heads(query, key, value)
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            has_key = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
            out = out.masked_fill(~has_key, 0.0)  # a query with no visible key: zeros
        return self.out_proj(torch.cat(out.unbind(dim=1), dim=-1)), None


CASES = [
    BlindCase(
        CHECK,
        "split_as_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as view(B, T, Dh, H), so head h gets every H-th feature.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I split with reshape(B, H, T, Dh) straight away, without moving the head axis.",
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
        "merge_interleaved",
        MHAMergeInterleaved,
        "mistake",
        "I merged with permute(0, 2, 3, 1), so the features are ordered (Dh, H).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_d_model",
        MHAScaleByD,
        "mistake",
        "I scaled by 1/sqrt(d_model) instead of 1/sqrt(Dh).",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale."),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True.",
    ),
    BlindCase(
        CHECK, "mask_unused", MHAMaskUnused, "mistake", "I take the mask but never apply it."
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9 (mask == 0), as in the Annotated Transformer.",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads and forgot out_proj.",
    ),
    BlindCase(
        CHECK,
        "values_through_k_proj",
        MHAValuesThroughKProj,
        "mistake",
        "I projected the values with k_proj instead of v_proj.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        MHASoftmaxDim1,
        "mistake",
        "I kept chapter 8's softmax(dim=1), which is the head axis of (B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "self_attention_signature",
        MHASelfOnly,
        "mistake",
        "I wrote forward(x, mask) for self-attention only, not forward(query, key, value, mask).",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_weights",
        MHAEinsum,
        "correct",
        "view to (B, T, H, Dh) and einsum for both products; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHAHeadLoop,
        "correct",
        "A Python loop over the heads on column slices, torch.cat of the heads; an extra "
        "dropout argument.",
    ),
    BlindCase(
        CHECK,
        "chunk_split_sdpa",
        MHAChunkSdpa,
        "correct",
        "Heads by chunk/stack and unbind/cat, F.scaled_dot_product_attention with a guard for "
        "rows with no key; returns (out, None) like the book.",
    ),
]
