"""Blind set B23, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _MHA(nn.Module):
    """The four layers and the usual split/merge; the subclasses change one thing."""

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

    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        weights = _masked_softmax(self.scores(q, k), mask)
        return self.out_proj(self.merge(weights @ v))


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_MHA):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)  # (B, H, T, Dh)


class MHASplitNoTranspose(_MHA):
    def split(self, x):
        B, T, _ = x.shape
        return x.reshape(B, self.num_heads, T, self.head_dim)  # (B, H, T, Dh) directly


class MHAMergeNoTranspose(_MHA):
    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.reshape(B, T, H * Dh)


class MHAMergeInterleaved(_MHA):
    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)  # heads to the end, then flatten


class MHAScaleByDModel(_MHA):
    def scores(self, q, k):
        d_model = self.num_heads * self.head_dim
        return q @ k.transpose(-2, -1) / math.sqrt(d_model)


class MHANoScale(_MHA):
    def scores(self, q, k):
        return torch.matmul(q, k.transpose(-2, -1))


class MHATrueBlocks(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(self.scores(q, k), None if mask is None else ~mask)
        return self.out_proj(self.merge(weights @ v))


class MHAMaskUnused(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = self.scores(q, k).softmax(dim=-1)
        return self.out_proj(self.merge(weights @ v))


class MHAFill1e9(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = self.scores(q, k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(scores.softmax(dim=-1) @ v))


class MHANoOutProj(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(self.scores(q, k), mask)
        return self.merge(weights @ v)  # the heads, concatenated


class MHAKeyLayerForValues(_MHA):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))
        weights = _masked_softmax(self.scores(q, k), mask)
        return self.out_proj(self.merge(weights @ v))


class MHASoftmaxOverQueries(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = self.scores(q, k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-2).nan_to_num(0.0)
        return self.out_proj(self.merge(weights @ v))


class MHAReturnsWeightsFirst(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(self.scores(q, k), mask)
        return weights, self.out_proj(self.merge(weights @ v))


# ---------------------------------------------------------------- correct variants


class MHAHeadLoop(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)  # (B, T, D)
        Dh = self.head_dim
        heads, all_weights = [], []
        for h in range(self.num_heads):
            cols = slice(h * Dh, (h + 1) * Dh)
            scores = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(Dh)  # (B, T_q, T_k)
            head_mask = None
            if mask is not None:  # broadcastable to (B, H, T_q, T_k): pick head h
                m4 = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))
                head_mask = m4[:, 0] if m4.shape[1] == 1 else m4[:, h]
            weights = _masked_softmax(scores, head_mask)
            heads.append(weights @ v[..., cols])
            all_weights.append(weights)
        out = self.out_proj(torch.cat(heads, dim=-1))  # head 0 first
        return out, torch.stack(all_weights, dim=1)


class MHAUnflattenEinsum(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * q.shape[-1] ** -0.5
        weights = _masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(2)  # (B, T_q, D)
        return self.out_proj(out), weights


class MHAFused(_MHA):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            visible = mask.any(dim=-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~visible)
            out = out * visible
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as view(B, T, Dh, H) and permuted the heads to the front",
    ),
    BlindCase(
        CHECK,
        "split_no_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I reshaped (B, T, D) straight to (B, H, T, Dh)",
    ),
    BlindCase(
        CHECK,
        "merge_no_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged (B, H, T, Dh) with reshape(B, T, D) without moving the head axis back",
    ),
    BlindCase(
        CHECK,
        "merge_interleaved",
        MHAMergeInterleaved,
        "mistake",
        "I merged with permute(0, 2, 3, 1), so the features of the heads interleave",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_model",
        MHAScaleByDModel,
        "mistake",
        "I scaled by sqrt(d_model) instead of sqrt(Dh)",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale"),
    BlindCase(CHECK, "true_blocks", MHATrueBlocks, "mistake", "I inverted the mask"),
    BlindCase(CHECK, "mask_unused", MHAMaskUnused, "mistake", "I never applied the mask"),
    BlindCase(
        CHECK,
        "fill_1e9",
        MHAFill1e9,
        "mistake",
        "I filled with -1e9, so a query with no key attends to the padding",
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
        "key_layer_for_values",
        MHAKeyLayerForValues,
        "mistake",
        "I projected the values with k_proj (copy-paste)",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        MHAReturnsWeightsFirst,
        "mistake",
        "I returned (weights, out)",
    ),
    BlindCase(
        CHECK,
        "head_loop",
        MHAHeadLoop,
        "correct",
        "a loop over the heads on column slices, torch.cat in order; returns (out, weights)",
    ),
    BlindCase(
        CHECK,
        "unflatten_einsum",
        MHAUnflattenEinsum,
        "correct",
        "unflatten to (B, T, H, Dh) and einsum, no transposes; returns (out, weights)",
    ),
    BlindCase(
        CHECK,
        "fused_sdpa",
        MHAFused,
        "correct",
        "F.scaled_dot_product_attention, empty rows made safe and then zeroed",
    ),
]
