"""Blind set B33, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (the reader's from chapter 6)."""
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The four layers as the skeleton asks, with a right split and merge."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_k).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, _, T, _ = x.shape
        return x.transpose(1, 2).reshape(B, T, self.h * self.d_k)  # (B, T, D)


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_Base):
    def forward(self, query, key, value, mask=None):
        def split(x):
            B, T, _ = x.shape
            return x.view(B, T, self.d_k, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        out = (w @ v).permute(0, 2, 3, 1).reshape(query.shape)  # back the same way
        return self.out_proj(out)


class MHASplitNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        def split(x):
            B, T, _ = x.shape
            return x.view(B, self.h, T, self.d_k)  # straight to (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        out = (w @ v).reshape(query.shape)  # (B, H, T, Dh) -> (B, T, D)
        return self.out_proj(out)


class MHAMergeHeadsLast(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        out = (w @ v).permute(0, 2, 3, 1).reshape(query.shape)  # (B, T, Dh, H) -> (B, T, D)
        return self.out_proj(out)


class MHAScaleByD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(query.shape[-1]), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _masked_softmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskPolarity(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is not None:
            mask = ~mask  # True = blocked, as nn.MultiheadAttention
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), dim=-1)
        return self.out_proj(self.merge(w @ v))


class MHAFillMinus1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(torch.softmax(scores, dim=-1) @ v))


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return self.merge(w @ v)  # the heads concatenated are the output


class MHAKeysFromQuery(_Base):
    def forward(self, query, key, value, mask=None):
        x = query  # self-attention: query, key and value are the same x
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return self.out_proj(self.merge(w @ v))


class MHAValueFromKey(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(key))  # the values are the keys' tokens
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return self.out_proj(self.merge(w @ v))


class MHASoftmaxOverQueries(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=-2))
        return self.out_proj(self.merge(w @ v))


class MHAMaskExtraHeadAxis(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is not None:
            mask = mask.unsqueeze(1)  # same mask for every head
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_k), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHAHeadLoop(_Base):
    """A Python loop over the heads, each a slice of the projections, then torch.cat."""

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        if mask is not None:
            mask = mask.expand(query.shape[0], self.h, query.shape[1], key.shape[1])
        heads = []
        for i in range(self.h):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(self.d_k)
            w = _masked_softmax(scores, None if mask is None else mask[:, i])
            heads.append(w @ V[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumWithWeights(_Base):
    """unflatten/einsum, and the pair (out, weights) returned."""

    def forward(self, query, key, value, mask=None):
        q = self.q_proj(query).unflatten(-1, (self.h, self.d_k))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (self.h, self.d_k))
        v = self.v_proj(value).unflatten(-1, (self.h, self.d_k))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.d_k**0.5
        weights = _masked_softmax(scores, mask)  # (B, H, T_q, T_k)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(-2)  # (B, T_q, D)
        return self.out_proj(out), weights


class MHASdpaGuarded(nn.Module):
    """F.scaled_dot_product_attention, with queries that see no key given all keys and then a
    zero output (the chapter's fused path); a dropout argument with a default."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _heads(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        return x.reshape(B, T, self.num_heads, D // self.num_heads).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self._heads(self.q_proj(query)),
            self._heads(self.k_proj(key)),
            self._heads(self.v_proj(value)),
        )
        p = self.dropout if self.training else 0.0
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        else:
            has_key = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key, dropout_p=p)
            out = out.masked_fill(~has_key, 0.0)
        B, H, T, Dh = out.shape
        return self.out_proj(out.permute(0, 2, 1, 3).reshape(B, T, H * Dh))


CASES = [
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I viewed D as (Dh, H) and permuted the H axis forward (and back the same way).",
    ),
    BlindCase(
        CHECK,
        "split_no_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I split with x.view(B, H, T, Dh) directly, without going through (B, T, H, Dh).",
    ),
    BlindCase(
        CHECK,
        "merge_no_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged the heads with reshape(B, T, D) straight from (B, H, T, Dh).",
    ),
    BlindCase(
        CHECK,
        "merge_heads_last",
        MHAMergeHeadsLast,
        "mistake",
        "I merged with permute(0, 2, 3, 1), putting the head axis last before the reshape.",
    ),
    BlindCase(
        CHECK,
        "scale_by_d",
        MHAScaleByD,
        "mistake",
        "I scaled by sqrt(d_model) instead of sqrt(Dh).",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the 1/sqrt(Dh) scale."),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAMaskPolarity,
        "mistake",
        "I inverted the mask, True = blocked as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        MHAMaskUnused,
        "mistake",
        "I forgot to pass the mask on to the softmax.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9 where mask == 0 and used a plain softmax.",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I created out_proj but return the concatenated heads without applying it.",
    ),
    BlindCase(
        CHECK,
        "keys_from_query",
        MHAKeysFromQuery,
        "mistake",
        "I projected keys and values from query, since in self-attention they are the same.",
    ),
    BlindCase(
        CHECK,
        "value_from_key",
        MHAValueFromKey,
        "mistake",
        "I applied v_proj to key instead of value.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=-2 of the (B, H, T_q, T_k) scores.",
    ),
    BlindCase(
        CHECK,
        "mask_extra_head_axis",
        MHAMaskExtraHeadAxis,
        "mistake",
        "I unsqueezed the mask at dim 1 to add a head axis, though it already broadcasts.",
    ),
    BlindCase(
        CHECK,
        "head_loop",
        MHAHeadLoop,
        "correct",
        "A loop over the heads on column slices of the projections, concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_weights",
        MHAEinsumWithWeights,
        "correct",
        "unflatten into (H, Dh), einsum for both products, and (out, weights) returned.",
    ),
    BlindCase(
        CHECK,
        "sdpa_guarded",
        MHASdpaGuarded,
        "correct",
        "F.scaled_dot_product_attention, rows with no visible key zeroed afterwards; a dropout "
        "argument with a default.",
    ),
]
