"""Blind set B30, check_multihead (chapter 9): multi-head attention with q_proj, k_proj, v_proj
and out_proj, as readers write it."""

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
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The four projections and the head bookkeeping; each mistake overrides one piece."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.dh).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(self.dh)

    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return _masked_softmax(scores, mask)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        out = self.weights(self.scores(q, k), mask) @ v
        return self.out_proj(self.merge(out))


# ---------------------------------------------------------------- mistakes


class MHAHeadsReversed(_Base):
    def merge(self, x: Tensor) -> Tensor:
        heads = list(x.unbind(dim=1))  # H tensors (B, T, Dh)
        heads.reverse()  # stacked last to first
        return torch.cat(heads, dim=-1)


class MHASplitDhH(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)


class MHASplitWithoutTranspose(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.reshape(B, self.h, T, self.dh)


class MHAMergeWithoutTranspose(_Base):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.reshape(B, T, H * Dh)


class MHAScaleFullWidth(_Base):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(self.h * self.dh)  # sqrt(d_model)


class MHAMaskInverted(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return _masked_softmax(scores, None if mask is None else ~mask)  # as nn.MultiheadAttention


class MHAFillMinus1e9(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return torch.softmax(scores, dim=-1)


class MHANoOutProj(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        return self.merge(self.weights(self.scores(q, k), mask) @ v)  # heads concatenated: done


class MHAValueThroughKeyProj(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-paste of the line above
        return self.out_proj(self.merge(self.weights(self.scores(q, k), mask) @ v))


class MHAKeysFromQuery(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(query))  # self-attention: key is query anyway
        v = self.split(self.v_proj(value))
        return self.out_proj(self.merge(self.weights(self.scores(q, k), mask) @ v))


class MHAMaskGetsHeadAxis(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            mask = mask.unsqueeze(1)  # one copy per head
        return _masked_softmax(scores, mask)


class MHAMaskIgnored(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return torch.softmax(scores, dim=-1)


class MHAOneHeadPerBatchRow(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.dh).transpose(0, 2)  # (H, T, B, Dh) by mistake

    def merge(self, x: Tensor) -> Tensor:
        H, T, B, Dh = x.shape
        return x.transpose(0, 2).reshape(B, T, H * Dh)


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_Base):
    """One head at a time on column slices, concatenated in order; returns (out, None)."""

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, None]:
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for i in range(self.h):
            cols = slice(i * self.dh, (i + 1) * self.dh)
            m = None
            if mask is not None:
                m = mask.expand(*mask.shape[:-3], self.h, *mask.shape[-2:])
                m = m.select(-3, i) if m.dim() >= 3 else m
            s = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(self.dh)
            heads.append(_masked_softmax(s, m) @ v[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1)), None


class MHAEinsum(_Base):
    """einsum with named axes; returns out and the per-head weights."""

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        B, Tq, D = query.shape
        q = self.q_proj(query).view(B, Tq, self.h, self.dh)
        k = self.k_proj(key).view(B, key.shape[1], self.h, self.dh)
        v = self.v_proj(value).view(B, value.shape[1], self.h, self.dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * self.dh**-0.5
        weights = _masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, Tq, D)
        return self.out_proj(out), weights


class MHAFused(_Base):
    """F.scaled_dot_product_attention, with queries that see nothing set to 0 apart."""

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = False,
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            sees = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~sees)
            out = out.masked_fill(~sees, 0.0)
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAHeadsReversed,
        "mistake",
        "I unbound the heads and concatenated them last to first.",
    ),
    BlindCase(
        CHECK,
        "split_as_dh_h",
        MHASplitDhH,
        "mistake",
        "I viewed D as (Dh, H) and permuted, so a head takes every H-th feature.",
    ),
    BlindCase(
        CHECK,
        "split_reshape_only",
        MHASplitWithoutTranspose,
        "mistake",
        "I split the heads with reshape(B, H, T, Dh) directly, without the transpose.",
    ),
    BlindCase(
        CHECK,
        "merge_reshape_only",
        MHAMergeWithoutTranspose,
        "mistake",
        "I merged (B, H, T, Dh) back with reshape(B, T, D), without moving the head axis.",
    ),
    BlindCase(
        CHECK,
        "scale_sqrt_d_model",
        MHAScaleFullWidth,
        "mistake",
        "I scaled by 1/sqrt(d_model) instead of 1/sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        MHAMaskInverted,
        "mistake",
        "I inverted the mask as nn.MultiheadAttention wants it.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled masked scores with -1e9; a query with no visible key then attends to the "
        "padding.",
    ),
    BlindCase(
        CHECK,
        "out_proj_skipped",
        MHANoOutProj,
        "mistake",
        "I created out_proj but returned the concatenated heads without it.",
    ),
    BlindCase(
        CHECK,
        "value_through_k_proj",
        MHAValueThroughKeyProj,
        "mistake",
        "A copy-paste slip: the values go through k_proj.",
    ),
    BlindCase(
        CHECK,
        "keys_projected_from_query",
        MHAKeysFromQuery,
        "mistake",
        "I projected the query for the keys, which is only right in self-attention.",
    ),
    BlindCase(
        CHECK,
        "extra_head_axis_on_mask",
        MHAMaskGetsHeadAxis,
        "mistake",
        "I unsqueezed a head axis into the mask, though it already broadcasts to (B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        MHAMaskIgnored,
        "mistake",
        "forward takes mask but the softmax never sees it.",
    ),
    BlindCase(
        CHECK,
        "heads_on_batch_axis",
        MHAOneHeadPerBatchRow,
        "mistake",
        "I transposed axes 0 and 2 instead of 1 and 2 when splitting, so heads and batch "
        "rows are mixed up.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A Python loop over the heads on column slices, concatenated in order; returns "
        "(out, None).",
    ),
    BlindCase(
        CHECK,
        "einsum_named_axes",
        MHAEinsum,
        "correct",
        "einsum over (B, T, H, Dh) views without any transpose; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "fused_sdpa",
        MHAFused,
        "correct",
        "F.scaled_dot_product_attention, queries that see no key zeroed apart; an unused "
        "need_weights argument.",
    ),
]
