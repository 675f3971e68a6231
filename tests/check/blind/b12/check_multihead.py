"""Blind set B12, check_multihead (chapter 9): multi-head attention with q/k/v/out_proj."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

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

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.dh).transpose(1, 2)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def heads(self, query, key, value):
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


# ---------------------------------------------------------------- mistakes


class MHADhFirst(_Base):
    def forward(self, query, key, value, mask=None):
        def split(x):
            B, T, _ = x.shape
            return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = (w @ v).permute(0, 2, 3, 1).reshape(query.shape)
        return self.out_proj(out)


class MHASplitNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        def split(x):
            B, T, _ = x.shape
            return x.view(B, self.h, T, self.dh)  # reshape straight to heads

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj((w @ v).reshape(query.shape))  # (B, H, T, Dh) -> (B, T, D)


class MHAScaleByD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.h * self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = masked_softmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAPolarity(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        w = masked_softmax(scores, None if mask is None else mask.logical_not())
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), dim=-1)
        return self.out_proj(self.merge(w @ v))


class MHAFill1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(scores.softmax(-1) @ v))


class MHAHeadsReversed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        heads = list((w @ v).unbind(1))
        heads.reverse()  # popped them off a stack
        return self.out_proj(torch.cat(heads, dim=-1))


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.merge(w @ v)  # the concatenated heads are the output


class MHAValueWithKeyProj(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-paste of the line above
        w = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHALoop(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        outs = []
        for h in range(self.h):
            sl = slice(h * self.dh, (h + 1) * self.dh)
            scores = q[..., sl] @ k[..., sl].transpose(-2, -1) / math.sqrt(self.dh)
            m = None
            if mask is not None:
                full = (query.shape[0], self.h, query.shape[1], key.shape[1])
                m = mask.expand(full)[:, h]
            outs.append(masked_softmax(scores, m) @ v[..., sl])
        return self.out_proj(torch.cat(outs, dim=-1))


class MHAEinsumPair(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        q = self.q_proj(query).reshape(B, Tq, self.h, self.dh)
        k = self.k_proj(key).reshape(B, key.shape[1], self.h, self.dh)
        v = self.v_proj(value).reshape(B, value.shape[1], self.h, self.dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.dh)
        w = masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, Tq, D)
        return self.out_proj(out), w


class MHAOwnSoftmax(_Base):
    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        q, k, v = self.heads(query, key, value)
        scores = torch.matmul(q * self.dh**-0.5, k.transpose(2, 3))
        if mask is not None:
            m = mask.expand_as(scores)
            any_key = m.any(-1, keepdim=True)
            scores = scores.masked_fill(~m, float("-inf")).masked_fill(~any_key, 0.0)
            w = scores.softmax(-1) * any_key
        else:
            w = scores.softmax(-1)
        out = self.out_proj(self.merge(w @ v))
        return (out, w) if need_weights else out


CASES = [
    BlindCase(
        CHECK,
        "split_dh_h",
        MHADhFirst,
        "mistake",
        "I viewed D as (Dh, H) and permuted, so each head takes every H-th feature.",
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
        "I merged the heads with reshape(B, T, D) straight from (B, H, T, Dh).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_D",
        MHAScaleByD,
        "mistake",
        "I divided by sqrt(d_model) instead of sqrt(Dh).",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale."),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAPolarity,
        "mistake",
        "I inverted the mask, True = blocked as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        MHAMaskUnused,
        "mistake",
        "I took mask as an argument but never applied it.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFill1e9,
        "mistake",
        "I filled masked scores with -1e9 and took a plain softmax.",
    ),
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAHeadsReversed,
        "mistake",
        "I unbound the heads into a list, reversed it and concatenated them.",
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
        "value_through_k_proj",
        MHAValueWithKeyProj,
        "mistake",
        "I projected the values with k_proj (a copy-paste slip).",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoop,
        "correct",
        "A Python loop over the heads with feature slices, concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumPair,
        "correct",
        "einsum on (B, T, H, Dh) tensors without transposes; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "own_softmax_need_weights",
        MHAOwnSoftmax,
        "correct",
        "Queries scaled before the product, its own masked softmax, an optional "
        "need_weights argument.",
    ),
]
