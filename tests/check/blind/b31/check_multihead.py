"""Blind set B31, check_multihead (chapter 9): multi-head attention with q/k/v/out projections."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The right layers and head split; the mistakes override one piece."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
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

    def scale(self) -> float:
        return 1 / math.sqrt(self.head_dim)

    def weights(self, q: Tensor, k: Tensor, mask: Tensor | None) -> Tensor:
        return _msoftmax(q @ k.transpose(-2, -1) * self.scale(), mask)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        out = self.weights(q, k, mask) @ v  # (B, H, T_q, Dh)
        return self.out_proj(self.merge(out))


# ---------------------------------------------------------------- mistakes


class MHAHeadsReversed(_Base):
    def merge(self, x: Tensor) -> Tensor:
        return torch.cat(list(x.unbind(1))[::-1], dim=-1)  # last head first


class MHASplitDhH(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, Dh * H)


class MHASplitNoTranspose(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, self.num_heads, T, self.head_dim)  # straight to (B, H, T, Dh)


class MHAMergeNoTranspose(_Base):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.reshape(B, T, H * Dh)  # back to (B, T, D)


class MHAScaleByD(_Base):
    def scale(self) -> float:
        return 1 / math.sqrt(self.d_model)


class MHANoScale(_Base):
    def scale(self) -> float:
        return 1.0


class MHAMaskInverted(_Base):
    def weights(self, q: Tensor, k: Tensor, mask: Tensor | None) -> Tensor:
        return _msoftmax(q @ k.transpose(-2, -1) * self.scale(), None if mask is None else ~mask)


class MHAMaskUnused(_Base):
    def weights(self, q: Tensor, k: Tensor, mask: Tensor | None) -> Tensor:
        return torch.softmax(q @ k.transpose(-2, -1) * self.scale(), dim=-1)


class MHAMinus1e9(_Base):
    def weights(self, q: Tensor, k: Tensor, mask: Tensor | None) -> Tensor:
        scores = q @ k.transpose(-2, -1) * self.scale()
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return F.softmax(scores, dim=-1)


class MHASoftmaxOverQueries(_Base):
    def weights(self, q: Tensor, k: Tensor, mask: Tensor | None) -> Tensor:
        scores = q @ k.transpose(-2, -1) * self.scale()
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.nan_to_num(scores.softmax(dim=-2))


class MHANoOutProj(_Base):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        return self.merge(self.weights(q, k, mask) @ v)  # the heads, concatenated


class MHAValuesThroughKProj(_Base):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-paste from the line above
        return self.out_proj(self.merge(self.weights(q, k, mask) @ v))


class MHAQueriesFromKey(_Base):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q = self.split(self.q_proj(key))  # self-attention: query, key, value are all x
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        return self.out_proj(self.merge(self.weights(q, k, mask) @ v))


class MHAMaskUnsqueezedAgain(_Base):
    def weights(self, q: Tensor, k: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        return _msoftmax(q @ k.transpose(-2, -1) * self.scale(), mask)


class MHAOutProjPerHead(_Base):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        heads = self.weights(q, k, mask) @ v  # (B, H, T_q, Dh)
        summed = heads.sum(dim=1)  # add the heads up, (B, T_q, Dh)
        return self.out_proj(summed.repeat(1, 1, self.num_heads))


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_Base):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        B, Tq, Tk, H = q.shape[0], q.shape[1], k.shape[1], self.num_heads
        full = None if mask is None else mask.broadcast_to(B, H, Tq, Tk)
        heads = []
        for h in range(H):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            m = None if full is None else full[:, h]
            w = _msoftmax(q[..., cols] @ k[..., cols].transpose(1, 2) / self.head_dim**0.5, m)
            heads.append(w @ v[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumPair(_Base):
    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = True,
    ):
        B, Tq, _ = query.shape
        Tk = key.shape[1]
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).reshape(B, Tq, H, Dh)
        k = self.k_proj(key).reshape(B, Tk, H, Dh)
        v = self.v_proj(value).reshape(B, Tk, H, Dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(Dh)
        weights = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, Tq, H * Dh)
        return self.out_proj(out), (weights if need_weights else None)


class MHAFusedLinear(_Base):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        B, Tq, D = query.shape
        q = F.linear(query, self.q_proj.weight, self.q_proj.bias)
        k = F.linear(key, self.k_proj.weight, self.k_proj.bias)
        v = F.linear(value, self.v_proj.weight, self.v_proj.bias)
        q, k, v = (
            t.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2) for t in (q, k, v)
        )
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            has_key = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
            out = out.masked_fill(~has_key, 0.0)
        return self.out_proj(out.transpose(1, 2).flatten(2))


class MHAFloat64Inside(_Base):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        dtype = query.dtype

        def proj(layer: nn.Linear, x: Tensor) -> Tensor:
            return F.linear(x.double(), layer.weight.double(), layer.bias.double())

        q = self.split(proj(self.q_proj, query))
        k = self.split(proj(self.k_proj, key))
        v = self.split(proj(self.v_proj, value))
        out = self.merge(self.weights(q, k, mask) @ v)
        return proj(self.out_proj, out).to(dtype)


CASES = [
    BlindCase(
        CHECK,
        "heads_concatenated_reversed",
        MHAHeadsReversed,
        "mistake",
        "I merged with torch.cat over the heads in reverse order.",
    ),
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as (Dh, H) with view(B, T, Dh, H) and permuted the heads to the front.",
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
        "I merged with reshape(B, T, D) straight from (B, H, T, Dh).",
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
        "mask_inverted",
        MHAMaskInverted,
        "mistake",
        "I read the mask as True = blocked, as nn.MultiheadAttention does.",
    ),
    BlindCase(CHECK, "mask_unused", MHAMaskUnused, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAMinus1e9,
        "mistake",
        "I filled -1e9 where mask == 0, so a query with no visible key attends to the padding.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2.",
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
        "values_through_k_proj",
        MHAValuesThroughKProj,
        "mistake",
        "I projected the values with k_proj (copy-paste slip).",
    ),
    BlindCase(
        CHECK,
        "queries_from_key",
        MHAQueriesFromKey,
        "mistake",
        "I projected the queries from the key argument, thinking of self-attention only.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_again",
        MHAMaskUnsqueezedAgain,
        "mistake",
        "I unsqueezed the mask at dim 1 for the heads, although it already broadcasts.",
    ),
    BlindCase(
        CHECK,
        "heads_summed",
        MHAOutProjPerHead,
        "mistake",
        "I summed the heads instead of concatenating them, and tiled the sum to width D.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A Python loop over the heads' column slices, then torch.cat and out_proj.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumPair,
        "correct",
        "Heads kept as (B, T, H, Dh) and handled with einsum; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "sdpa_with_empty_row_guard",
        MHAFusedLinear,
        "correct",
        "F.scaled_dot_product_attention, with rows that see no key opened up and then zeroed.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        MHAFloat64Inside,
        "correct",
        "Computed in float64, cast back to the query's dtype.",
    ),
]
