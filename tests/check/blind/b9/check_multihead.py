"""Blind set B9, check_multihead (chapter 9): multi-head attention with q/k/v/out projections."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _safe_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    empty = ~mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)


class _Base(nn.Module):
    """The four layers and a right forward; each mistake overrides one piece."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        return x.view(B, T, self.h, self.d_k).transpose(1, 2)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_k)

    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return _safe_softmax(scores, mask)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        return x.view(B, T, self.d_k, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)


class MHASplitNoTranspose(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        return x.reshape(B, self.h, T, self.d_k)  # straight to (B, H, T, Dh)


class MHAMergeNoTranspose(_Base):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.contiguous().view(B, T, H * Dh)


class MHAMergePermute(_Base):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)  # (B, T, Dh, H) flattened


class MHAScaleByDModel(_Base):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(self.h * self.d_k)


class MHANoScale(_Base):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1)


class MHAMaskPolarity(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return _safe_softmax(scores, None if mask is None else ~mask)  # as nn.MultiheadAttention


class MHAMaskUnused(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return torch.softmax(scores, dim=-1)


class MHAFillMinus1e9(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return torch.softmax(scores, dim=-1)


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = self.weights(self.scores(q, k), mask)
        return self.merge(w @ v)  # the heads concatenated, not mixed


class MHAMaskUnsqueezed(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        return _safe_softmax(scores, mask)


class MHAValueFromKey(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(key))  # key passed where value belongs
        w = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(w @ v))


class MHAQueryLengthForAll(_Base):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape  # one T for everything
        q = self.q_proj(query).view(B, T, self.h, self.d_k).transpose(1, 2)
        k = self.k_proj(key).view(B, T, self.h, self.d_k).transpose(1, 2)
        v = self.v_proj(value).view(B, T, self.h, self.d_k).transpose(1, 2)
        w = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHAUnflattenEinsum(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        w = _safe_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(-2)
        return self.out_proj(out)


class MHAHeadLoop(_Base):
    def forward(self, query, key, value, mask=None):
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for h in range(self.h):
            cols = slice(h * self.d_k, (h + 1) * self.d_k)
            s = Q[..., cols] @ K[..., cols].transpose(-2, -1) / math.sqrt(self.d_k)  # (B, T_q, T_k)
            m = None
            if mask is not None:
                full = mask.expand(Q.shape[0], self.h, Q.shape[1], K.shape[1])
                m = full[:, h]
            heads.append(_safe_softmax(s, m) @ V[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAReturnsPair(_Base):
    def forward(self, query, key, value, mask=None, need_weights: bool = True):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = self.weights(self.scores(q, k), mask)
        out = self.out_proj(self.merge(w @ v))
        return (out, w) if need_weights else out


class MHAFloat64(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query).double())
        k = self.split(self.k_proj(key).double())
        v = self.split(self.v_proj(value).double())
        w = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(w @ v).to(query.dtype))


CASES = [
    BlindCase(
        CHECK,
        "split_as_dh_by_h",
        MHASplitDhH,
        "mistake",
        "I viewed D as (Dh, H) instead of (H, Dh), so each head gets every H-th feature.",
    ),
    BlindCase(
        CHECK,
        "split_reshape_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I reshaped (B, T, D) straight to (B, H, T, Dh) without a view to (B, T, H, Dh) "
        "and a transpose.",
    ),
    BlindCase(
        CHECK,
        "merge_view_without_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged (B, H, T, Dh) back with .contiguous().view(B, T, D), without first "
        "moving the head axis after T.",
    ),
    BlindCase(
        CHECK,
        "merge_with_wrong_permute",
        MHAMergePermute,
        "mistake",
        "I merged with permute(0, 2, 3, 1), so the concatenated features come in (Dh, H) order.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_d_model",
        MHAScaleByDModel,
        "mistake",
        "I divided the scores by sqrt(d_model) instead of sqrt(Dh).",
    ),
    BlindCase(
        CHECK, "no_scale", MHANoScale, "mistake", "I forgot to divide the scores by sqrt(Dh)."
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAMaskPolarity,
        "mistake",
        "I used nn.MultiheadAttention's convention, True = blocked.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        MHAMaskUnused,
        "mistake",
        "I took a plain softmax and never applied the mask.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I masked with -1e9, so a query with no visible key attends evenly to the padding.",
    ),
    BlindCase(
        CHECK,
        "out_proj_skipped",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads without passing them through out_proj.",
    ),
    BlindCase(
        CHECK,
        "mask_gets_extra_head_axis",
        MHAMaskUnsqueezed,
        "mistake",
        "I always did mask.unsqueeze(1) to add a head axis, even when the mask already "
        "broadcasts to (B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "values_from_key",
        MHAValueFromKey,
        "mistake",
        "I projected key instead of value with v_proj (right in self-attention, wrong "
        "when value differs from key).",
    ),
    BlindCase(
        CHECK,
        "query_length_for_keys",
        MHAQueryLengthForAll,
        "mistake",
        "I took T from the query and used it to split keys and values too, which fails "
        "when T_k != T_q.",
    ),
    BlindCase(
        CHECK,
        "unflatten_einsum",
        MHAUnflattenEinsum,
        "correct",
        "I split the heads with unflatten, kept them in (B, T, H, Dh) and wrote the "
        "products with einsum.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHAHeadLoop,
        "correct",
        "I looped over the heads, slicing each head's feature block, and concatenated.",
    ),
    BlindCase(
        CHECK,
        "returns_out_and_weights",
        MHAReturnsPair,
        "correct",
        "I return the pair (out, weights) by default (need_weights=True).",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        MHAFloat64,
        "correct",
        "I computed the attention in float64 and cast back before out_proj.",
    ),
]
