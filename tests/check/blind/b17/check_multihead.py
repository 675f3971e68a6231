"""Blind set B17, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The right layers and a right split and merge; each mistake below overrides one piece."""

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
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)

    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return _masked_softmax(scores, mask)

    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        weights = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(weights @ v))


# ---------------------------------------------------------------- mistakes


class MHAMergeHeadLast(_Base):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, Dh * H)  # (B, T, Dh, H) -> (B, T, D)


class MHASplitDhH(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, Dh * H)  # the inverse of my split


class MHASplitViewOnly(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, self.num_heads, T, self.head_dim)  # straight to (B, H, T, Dh)


class MHAMergeReshapeOnly(_Base):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.reshape(B, T, H * Dh)


class MHAScaleByDModel(_Base):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        d_model = self.num_heads * self.head_dim
        return q @ k.transpose(-2, -1) / math.sqrt(d_model)


class MHANoScale(_Base):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return torch.matmul(q, k.transpose(-1, -2))


class MHAMaskTrueBlocks(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # as for nn.MultiheadAttention
        return torch.nan_to_num(scores.softmax(-1))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        out = F.scaled_dot_product_attention(q, k, v)  # the mask is for padding, which is zeros
        return self.out_proj(self.merge(out))


class MHAFillMinus1e9(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return F.softmax(scores, dim=-1)


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        weights = self.weights(self.scores(q, k), mask)
        return self.merge(weights @ v)  # the heads concatenated are the answer


class MHAMaskGetsHeadAxis(_Base):
    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        return super().forward(query, key, value, mask)


class MHAKeyProjForValues(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-paste of the line above
        weights = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAKeysFromQuery(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(query))  # self-attention: all three come from x
        v = self.split(self.v_proj(value))
        weights = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(weights @ v))


class MHASoftmaxOverQueries(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, dim=-2))


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(nn.Module):
    """A Python loop over the heads, each taking its slice of Dh features; returns the pair
    (out, weights)."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        dh = Q.shape[-1] // self.h
        if mask is not None:
            while mask.dim() < 4:
                mask = mask.unsqueeze(0)  # (B or 1, H or 1, T_q or 1, T_k)
        outs, all_weights = [], []
        for i in range(self.h):
            cols = slice(i * dh, (i + 1) * dh)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / dh**0.5  # (B, T_q, T_k)
            head_mask = None if mask is None else mask[:, min(i, mask.shape[1] - 1)]
            w = _masked_softmax(scores, head_mask)
            outs.append(w @ V[..., cols])
            all_weights.append(w)
        return self.out_proj(torch.cat(outs, dim=-1)), torch.stack(all_weights, dim=1)


class MHAUnflattenEinsum(_Base):
    """unflatten / flatten for the heads, einsum for the products, torch.where for the mask."""

    def forward(self, query, key, value, mask=None):
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        if mask is None:
            weights = scores.softmax(-1)
        else:
            mask = mask.expand_as(scores)
            empty = ~mask.any(-1, keepdim=True)
            scores = torch.where(mask | empty, scores, torch.full_like(scores, float("-inf")))
            weights = torch.where(empty, torch.zeros_like(scores), scores.softmax(-1))
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(-2)  # (B, T_q, D)
        return self.out_proj(out), weights


class MHASdpa(_Base):
    """F.scaled_dot_product_attention, with rows that see no key given every key and then
    zeroed; extra optional dropout and need_weights arguments."""

    def forward(self, query, key, value, mask=None, dropout_p: float = 0.0, need_weights=False):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)
        else:
            has_key = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask | ~has_key, dropout_p=dropout_p
            ).masked_fill(~has_key, 0.0)
        out = self.out_proj(self.merge(out))
        if need_weights:
            return out, _masked_softmax(self.scores(q, k), mask)
        return out


CASES = [
    BlindCase(
        CHECK,
        "merge_head_axis_last",
        MHAMergeHeadLast,
        "mistake",
        "I merged with permute(0, 2, 3, 1), so the features come out as (Dh, H): the heads' "
        "features interleaved instead of concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as view(B, T, Dh, H) and moved H forward (with the matching merge), so each "
        "head takes every H-th feature.",
    ),
    BlindCase(
        CHECK,
        "split_view_without_transpose",
        MHASplitViewOnly,
        "mistake",
        "I split with view(B, H, T, Dh) directly, without going through (B, T, H, Dh) and a "
        "transpose.",
    ),
    BlindCase(
        CHECK,
        "merge_reshape_without_transpose",
        MHAMergeReshapeOnly,
        "mistake",
        "I merged (B, H, T, Dh) with reshape(B, T, D) without moving the head axis back first.",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_model",
        MHAScaleByDModel,
        "mistake",
        "I scaled by sqrt(d_model) instead of sqrt(Dh).",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale altogether."),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        MHAMaskTrueBlocks,
        "mistake",
        "I filled -inf where the mask is True, the polarity of nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        MHAMaskUnused,
        "mistake",
        "I called F.scaled_dot_product_attention without passing the mask on.",
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
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads without out_proj.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_for_heads",
        MHAMaskGetsHeadAxis,
        "mistake",
        "I added a head axis to the mask with unsqueeze(1), although it already broadcasts to "
        "(B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "k_proj_for_values",
        MHAKeyProjForValues,
        "mistake",
        "I projected the values with k_proj (a copy-paste slip).",
    ),
    BlindCase(
        CHECK,
        "keys_from_query",
        MHAKeysFromQuery,
        "mistake",
        "I projected the keys from query instead of key, thinking of self-attention only.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2, the queries.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A Python loop over the heads on column slices, concatenated in order; returns "
        "(out, weights).",
    ),
    BlindCase(
        CHECK,
        "unflatten_einsum",
        MHAUnflattenEinsum,
        "correct",
        "unflatten/flatten for the heads, einsum for both products, torch.where for the mask; "
        "returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "sdpa_with_options",
        MHASdpa,
        "correct",
        "F.scaled_dot_product_attention with empty rows guarded, extra dropout_p and "
        "need_weights arguments with defaults; returns out alone.",
    ),
]
