"""Blind set B22, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from transformer_tutorial.attention import fused_attention

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
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

    def heads(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


# ---------------------------------------------------------------- mistakes


class MHAHeadsReversed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = w @ v  # (B, H, T, Dh)
        heads = [out[:, i] for i in range(self.h)]
        return self.out_proj(torch.cat(heads[::-1], dim=-1))  # stacked last head first


class MHASplitDhH(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHASplitNoTranspose(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.reshape(B, self.h, T, self.dh)  # straight into (B, H, T, Dh)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = w @ v
        B, H, T, Dh = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(B, T, H * Dh))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = w @ v
        B, H, T, Dh = out.shape
        return self.out_proj(out.reshape(B, T, H * Dh))


class MHAScaleByD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        d_model = self.h * self.dh
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_model), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskInverted(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(
            q @ k.transpose(-2, -1) / math.sqrt(self.dh), None if mask is None else ~mask
        )
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), dim=-1)
        return self.out_proj(self.merge(w @ v))


class MHAFillMinus1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(scores.softmax(-1) @ v))


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.merge(w @ v)  # the heads concatenated are the output


class MHAValuesThroughKProj(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-paste slip
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHASoftmaxOverQueries(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=-2))
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnsqueezedAgain(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHAEinsum(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        q = self.q_proj(query).view(B, Tq, self.h, self.dh)
        k = self.k_proj(key).view(B, key.shape[1], self.h, self.dh)
        v = self.v_proj(value).view(B, value.shape[1], self.h, self.dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.dh)
        w = _masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, Tq, D)
        return self.out_proj(out), w


class MHAHeadLoop(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        if mask is not None and mask.dim() == 4:
            mask = mask.expand(-1, self.h, -1, -1) if mask.shape[1] == 1 else mask
        outs = []
        for h in range(self.h):
            cols = slice(h * self.dh, (h + 1) * self.dh)
            m = None if mask is None else (mask[:, h] if mask.dim() == 4 else mask)
            w = _masked_softmax(q[..., cols] @ k[..., cols].mT / self.dh**0.5, m)
            outs.append(w @ v[..., cols])
        return self.out_proj(torch.cat(outs, dim=-1))


class MHAFused(_Base):
    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        q, k, v = self.heads(query, key, value)
        out = fused_attention(q, k, v, mask)  # chapter 6's safe wrapper of the fused kernel
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAHeadsReversed,
        "mistake",
        "I concatenated the heads last one first.",
    ),
    BlindCase(
        CHECK, "split_dh_h", MHASplitDhH, "mistake", "I viewed D as (Dh, H) instead of (H, Dh)."
    ),
    BlindCase(
        CHECK,
        "split_no_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I reshaped (B, T, D) straight to (B, H, T, Dh) without a transpose.",
    ),
    BlindCase(
        CHECK,
        "merge_no_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I reshaped (B, H, T, Dh) back to (B, T, D) without transposing first.",
    ),
    BlindCase(CHECK, "scale_by_d", MHAScaleByD, "mistake", "I scaled by sqrt(D), not sqrt(Dh)."),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale."),
    BlindCase(
        CHECK,
        "mask_inverted",
        MHAMaskInverted,
        "mistake",
        "I used ~mask as in nn.MultiheadAttention.",
    ),
    BlindCase(CHECK, "mask_unused", MHAMaskUnused, "mistake", "I never applied the mask."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled with -1e9 (the Annotated Transformer's way).",
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
        "I projected the values with k_proj.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim -2.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_again",
        MHAMaskUnsqueezedAgain,
        "mistake",
        "I added a head axis to a mask that already broadcasts to (B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "einsum_pair",
        MHAEinsum,
        "correct",
        "einsum with (B, T, H, Dh) layout, returns (out, weights).",
    ),
    BlindCase(
        CHECK, "head_loop", MHAHeadLoop, "correct", "A Python loop over heads with column slices."
    ),
    BlindCase(
        CHECK,
        "fused",
        MHAFused,
        "correct",
        "The chapter's fused_attention, an unused need_weights argument.",
    ),
]
