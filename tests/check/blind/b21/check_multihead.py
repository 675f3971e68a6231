"""Blind set B21, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax (chapter 6's)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The book's constructor and right split/merge; subclasses change one piece."""

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
        return x.view(B, T, self.h, self.dh).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> Tensor:
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return weights @ v

    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        return self.out_proj(self.merge(self.attend(q, k, v, mask)))


# ---------------------------------------------------------------- mistakes


class MHAHeadsReversed(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        out = self.attend(q, k, v, mask)  # (B, H, T, Dh)
        heads = [out[:, i] for i in range(self.h)]
        merged = torch.cat(heads[::-1], dim=-1)  # last head first
        return self.out_proj(merged)


class MHASplitDhH(_Base):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)


class MHASplitNoTranspose(_Base):
    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, self.h, T, self.dh)


class MHAMergeNoTranspose(_Base):
    def merge(self, x):
        B, H, T, Dh = x.shape
        return x.reshape(B, T, H * Dh)


class MHAScaleByD(_Base):
    def attend(self, q, k, v, mask):
        d_model = self.h * self.dh
        weights = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(d_model), mask)
        return weights @ v


class MHANoScale(_Base):
    def attend(self, q, k, v, mask):
        return _msoftmax(q @ k.transpose(-2, -1), mask) @ v


class MHAMaskInverted(_Base):
    def attend(self, q, k, v, mask):
        return (
            _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), None if mask is None else ~mask)
            @ v
        )


class MHAMaskIgnored(_Base):
    def attend(self, q, k, v, mask):
        return _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), None) @ v


class MHAFill1e9(_Base):
    def attend(self, q, k, v, mask):
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return scores.softmax(-1) @ v


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        return self.merge(self.attend(q, k, v, mask))  # heads concatenated


class MHAValuesThroughKProj(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))
        return self.out_proj(self.merge(self.attend(q, k, v, mask)))


class MHAMaskUnsqueezedAgain(_Base):
    def attend(self, q, k, v, mask):
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        return _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask) @ v


class MHASoftmaxOverQueries(_Base):
    def attend(self, q, k, v, mask):
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return scores.softmax(dim=-2).nan_to_num(0.0) @ v


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        dh = q.shape[-1] // self.num_heads
        masks = [None] * self.num_heads
        if mask is not None:
            full = mask.expand(q.shape[0], self.num_heads, q.shape[1], k.shape[1])
            masks = [full[:, i] for i in range(self.num_heads)]  # (B, T_q, T_k) each
        heads = []
        for i in range(self.num_heads):
            cols = slice(i * dh, (i + 1) * dh)
            scores = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(dh)
            heads.append(_msoftmax(scores, masks[i]) @ v[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumPair(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        weights = _msoftmax(scores, mask)  # (B, H, T_q, T_k)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(2)
        return self.out_proj(out), weights


class MHAPermuteFlatten(_Base):
    def split(self, x):
        return x.unflatten(2, (self.h, self.dh)).permute(0, 2, 1, 3)

    def merge(self, x):
        return x.permute(0, 2, 1, 3).flatten(2)

    def attend(self, q, k, v, mask):
        scores = torch.matmul(q * self.dh**-0.5, k.transpose(2, 3))
        if mask is not None:
            visible = mask.any(-1, keepdim=True)
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
            return (scores.softmax(-1) * visible) @ v
        return scores.softmax(-1) @ v


class MHAFoldHeadsIntoBatch(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        B, Tq, D = query.shape
        Tk = key.shape[1]
        q = self.split(self.q_proj(query)).reshape(B * self.h, Tq, self.dh)
        k = self.split(self.k_proj(key)).reshape(B * self.h, Tk, self.dh)
        v = self.split(self.v_proj(value)).reshape(B * self.h, Tk, self.dh)
        scores = torch.bmm(q, k.transpose(1, 2)).view(B, self.h, Tq, Tk) / math.sqrt(self.dh)
        weights = _msoftmax(scores, mask).reshape(B * self.h, Tq, Tk)
        out = torch.bmm(weights, v).view(B, self.h, Tq, self.dh)
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "heads_concatenated_reversed",
        MHAHeadsReversed,
        "mistake",
        "I concatenated the heads with heads[::-1], the last head first.",
    ),
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as (Dh, H) with view(B, T, Dh, H) and merged back the same way.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I split with x.view(B, H, T, Dh) directly, without moving the head axis.",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged with x.reshape(B, T, D) straight from (B, H, T, Dh).",
    ),
    BlindCase(
        CHECK, "scale_by_d_model", MHAScaleByD, "mistake", "I scaled by sqrt(D), not sqrt(Dh)."
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the scale."),
    BlindCase(
        CHECK,
        "mask_inverted",
        MHAMaskInverted,
        "mistake",
        "I passed ~mask, the nn.MultiheadAttention polarity.",
    ),
    BlindCase(CHECK, "mask_ignored", MHAMaskIgnored, "mistake", "I never applied the mask."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFill1e9,
        "mistake",
        "I filled masked scores with -1e9 (mask == 0) and took a plain softmax.",
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
        "I projected the values with k_proj (copy-paste).",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_again",
        MHAMaskUnsqueezedAgain,
        "mistake",
        "I added a head axis to the mask with unsqueeze(1), though it already broadcasts.",
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
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A Python loop over heads slicing the projected features, concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumPair,
        "correct",
        "unflatten and einsum without transposes; returns (out, weights); dropout and bias "
        "arguments.",
    ),
    BlindCase(
        CHECK,
        "permute_flatten_finfo",
        MHAPermuteFlatten,
        "correct",
        "unflatten/permute/flatten for split and merge, queries pre-scaled, the dtype's lowest "
        "value as the fill.",
    ),
    BlindCase(
        CHECK,
        "heads_folded_into_batch",
        MHAFoldHeadsIntoBatch,
        "correct",
        "Heads folded into the batch axis (B * H) for bmm, unfolded for the mask.",
    ),
]
