"""Blind set B6, check_multihead (chapter 9): multi-head attention with q/k/v/out projections."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _MHA(nn.Module):
    """Constructor and right split/merge; each mistake overrides one piece."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)

    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return _softmax(scores, mask)

    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_MHA):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)


class MHASplitWithoutTranspose(_MHA):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, self.num_heads, T, self.head_dim)  # straight to (B, H, T, Dh)


class MHAMergeWithoutTranspose(_MHA):
    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.reshape(B, T, H * Dh)  # (B, H, T, Dh) -> (B, T, D)


class MHAMergeViewAfterTranspose(_MHA):
    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).view(B, T, H * Dh)


class MHAScaleByModelWidth(_MHA):
    def scores(self, q, k):
        d_model = self.num_heads * self.head_dim
        return q @ k.transpose(-2, -1) / math.sqrt(d_model)  # d_model, as in the paper's d_k


class MHANoScale(_MHA):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1)


class MHAMaskPolarity(_MHA):
    def weights(self, scores, mask):
        return _softmax(scores, None if mask is None else ~mask)  # True = padding


class MHAMaskUnused(_MHA):
    def weights(self, scores, mask):
        return scores.softmax(-1)  # the mask is applied by the caller


class MHAFillMinus1e9(_MHA):
    def weights(self, scores, mask):
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return scores.softmax(-1)


class MHAMaskUnsqueezedAgain(_MHA):
    def weights(self, scores, mask):
        if mask is not None:
            mask = mask.unsqueeze(1)  # one more axis for the heads
        return _softmax(scores, mask)


class MHANoOutProj(_MHA):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = self.weights(self.scores(q, k), mask)
        return self.merge(w @ v)  # the heads concatenated are the answer


# ---------------------------------------------------------------- correct variants


class MHAHeadLoop(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.dh = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        if mask is not None:
            while mask.dim() < 4:
                mask = mask.unsqueeze(0)  # (T_q, T_k) -> (1, 1, T_q, T_k)
        heads = []
        for i in range(self.h):
            cols = slice(i * self.dh, (i + 1) * self.dh)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(self.dh)
            head_mask = None if mask is None else mask[:, min(i, mask.shape[1] - 1)]
            heads.append(_softmax(scores, head_mask) @ V[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumWithWeights(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        B, Tq, D = query.shape
        H = self.num_heads
        q = self.q_proj(query).reshape(B, Tq, H, D // H)
        k = self.k_proj(key).reshape(B, key.shape[1], H, D // H)
        v = self.v_proj(value).reshape(B, value.shape[1], H, D // H)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * (D // H) ** -0.5
        weights = _softmax(scores, mask)  # (B, H, T_q, T_k)
        p = self.dropout if self.training else 0.0
        out = torch.einsum("bhqk,bkhd->bqhd", F.dropout(weights, p), v).reshape(B, Tq, D)
        return self.out_proj(out), weights


class MHAFusedSafe(_MHA):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            sees = mask.any(-1, keepdim=True)  # rows that see nothing attend everywhere, then 0
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~sees)
            out = out.masked_fill(~sees, 0.0)
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "split_dh_by_h",
        MHASplitDhH,
        "mistake",
        "I split D as view(B, T, Dh, H) and permuted the H axis forward, so each head gets "
        "every H-th feature instead of a contiguous block.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitWithoutTranspose,
        "mistake",
        "I split with view(B, H, T, Dh) directly, without view(B, T, H, Dh).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeWithoutTranspose,
        "mistake",
        "I merged (B, H, T, Dh) back with reshape(B, T, D) without moving the head axis first.",
    ),
    BlindCase(
        CHECK,
        "merge_view_after_transpose",
        MHAMergeViewAfterTranspose,
        "mistake",
        "I merged with transpose(1, 2).view(B, T, D), which fails because the tensor is not "
        "contiguous after the transpose.",
    ),
    BlindCase(
        CHECK,
        "scale_sqrt_d_model",
        MHAScaleByModelWidth,
        "mistake",
        "I scaled by 1/sqrt(d_model) instead of 1/sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        MHANoScale,
        "mistake",
        "I forgot the 1/sqrt(Dh) scale.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity_flipped",
        MHAMaskPolarity,
        "mistake",
        "I inverted the mask, treating True as padding as nn.MultiheadAttention does.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        MHAMaskUnused,
        "mistake",
        "I take a mask argument but never apply it.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key attends to the padding.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_again",
        MHAMaskUnsqueezedAgain,
        "mistake",
        "I unsqueezed the mask at axis 1 for the heads, although it already broadcasts to "
        "(B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads without passing them through out_proj.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHAHeadLoop,
        "correct",
        "A Python loop over the heads on column slices of the projections, concatenated in "
        "order, then out_proj.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_weights",
        MHAEinsumWithWeights,
        "correct",
        "Heads kept as (B, T, H, Dh) and combined with einsum; returns (out, weights), with an "
        "optional dropout argument.",
    ),
    BlindCase(
        CHECK,
        "fused_sdpa_guarded",
        MHAFusedSafe,
        "correct",
        "F.scaled_dot_product_attention for the heads, with rows that see no key opened up and "
        "their output set to 0 afterwards.",
    ),
]
