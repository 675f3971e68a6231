"""Blind set B19, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The book's four layers and a right split/merge; each mistake overrides one piece."""

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
        return x.transpose(1, 2).reshape(B, T, self.h * self.d_k)

    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_k)

    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return _masked_softmax(scores, mask)

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
        B, T, _ = x.shape
        return x.view(B, T, self.d_k, self.h).permute(0, 3, 1, 2)  # D as (Dh, H)

    def merge(self, x: Tensor) -> Tensor:
        B, _, T, _ = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, -1)  # back the same way


class MHASplitNoTranspose(_Base):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, self.h, T, self.d_k)  # straight to (B, H, T, Dh)


class MHAMergeNoTranspose(_Base):
    def merge(self, x: Tensor) -> Tensor:
        B, _, T, _ = x.shape
        return x.reshape(B, T, -1)  # (B, H, T, Dh) -> (B, T, D)


class MHAMergeInterleaved(_Base):
    def merge(self, x: Tensor) -> Tensor:
        B, _, T, _ = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, -1)  # (B, T, Dh, H): heads interleaved


class MHAScaleByD(_Base):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1) / math.sqrt(self.h * self.d_k)  # sqrt(d_model)


class MHANoScale(_Base):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1)


class MHAMaskInverted(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # as nn.MultiheadAttention
        return torch.nan_to_num(scores.softmax(-1))


class MHAMaskIgnored(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return scores.softmax(-1)


class MHAFill1e9(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return scores.softmax(-1)


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = self.weights(self.scores(q, k), mask)
        return self.merge(w @ v)  # the concatenated heads are the output


class MHAKProjOnValues(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-pasted line
        w = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(w @ v))


class MHAWeightsFirst(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = self.weights(self.scores(q, k), mask)
        return w, self.out_proj(self.merge(w @ v))


class MHASoftmaxQueries(_Base):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.nan_to_num(scores.softmax(dim=2))  # (B, H, T_q, T_k): dim 2


# ---------------------------------------------------------------- correct variants


class MHALoopHeads(nn.Module):
    """A Python loop over the heads, each a slice of the projected features; cat in order."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        Dh = self.head_dim
        heads = []
        for h in range(self.num_heads):
            sl = slice(h * Dh, (h + 1) * Dh)
            scores = q[..., sl] @ k[..., sl].transpose(1, 2) / Dh**0.5  # (B, T_q, T_k)
            head_mask = None
            if mask is not None:
                m = mask if mask.dim() < 4 else mask[:, min(h, mask.shape[1] - 1)]
                head_mask = m.expand(scores.shape)
            heads.append(_masked_softmax(scores, head_mask) @ v[..., sl])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumPair(nn.Module):
    """unflatten/flatten with einsum; returns (out, weights); an unused dropout argument."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, query, key, value, mask=None):
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        weights = _masked_softmax(scores, None if mask is None else mask.expand(scores.shape))
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(-2)
        return self.out_proj(out), weights


class MHAPermute(_Base):
    """permute/contiguous/view for the split and merge; masked with torch.where."""

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.reshape(B, T, self.h, self.d_k).permute(0, 2, 1, 3)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 1, 3).contiguous().view(B, T, H * Dh)

    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is None:
            return torch.softmax(scores, -1)
        any_key = mask.any(-1, keepdim=True)
        masked = torch.where(mask & any_key, scores, torch.full_like(scores, -math.inf))
        safe = torch.where(any_key, masked, torch.zeros_like(scores))
        return torch.where(any_key, safe.softmax(-1), torch.zeros_like(scores))


CASES = [
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as (Dh, H) and merged back the same way.",
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
        "merge_interleaved",
        MHAMergeInterleaved,
        "mistake",
        "I merged through (B, T, Dh, H), so the heads' features are interleaved.",
    ),
    BlindCase(
        CHECK,
        "scale_by_d_model",
        MHAScaleByD,
        "mistake",
        "I scaled by sqrt(d_model) instead of sqrt(Dh).",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I did not scale the scores."),
    BlindCase(
        CHECK,
        "mask_inverted",
        MHAMaskInverted,
        "mistake",
        "I used masked_fill(mask, -inf) as with nn.MultiheadAttention's masks.",
    ),
    BlindCase(CHECK, "mask_ignored", MHAMaskIgnored, "mistake", "I never used the mask."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFill1e9,
        "mistake",
        "I filled masked scores with -1e9, as in the Annotated Transformer.",
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
        "k_proj_on_values",
        MHAKProjOnValues,
        "mistake",
        "I projected the values with k_proj (a copy-pasted line).",
    ),
    BlindCase(
        CHECK,
        "weights_first",
        MHAWeightsFirst,
        "mistake",
        "I returned (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxQueries,
        "mistake",
        "I took the softmax over dim=2 of (B, H, T_q, T_k), the queries.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopHeads,
        "correct",
        "A loop over the heads on slices of the projected features, concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumPair,
        "correct",
        "unflatten and einsum instead of view/transpose; returns (out, weights); extra "
        "dropout argument defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "permute_where",
        MHAPermute,
        "correct",
        "permute/contiguous/view for the split and merge, the mask by torch.where.",
    ),
]
