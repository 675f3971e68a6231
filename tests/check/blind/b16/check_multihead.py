"""Blind set B16, check_multihead (chapter 9): multi-head attention as readers write it."""

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


class _MHA(nn.Module):
    """The book's layer names and a right split / attend / merge; subclasses change one piece."""

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
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)  # (B, T, D)

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
        weights = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(weights @ v))


# ---------------------------------------------------------------- mistakes


class MHAMergeDhFirst(_MHA):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)  # (B, T, Dh, H) flattened


class MHASplitDhH(_MHA):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.d_k, self.h).permute(0, 3, 1, 2)  # (B, T, Dh, H) -> (B, H, T, Dh)


class MHASplitWithoutTranspose(_MHA):
    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.reshape(B, self.h, T, self.d_k)  # straight to (B, H, T, Dh)


class MHAMergeWithoutTranspose(_MHA):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.reshape(B, T, H * Dh)  # back to (B, T, D)


class MHAMergeWithView(_MHA):
    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).view(B, T, H * Dh)  # view is cheaper than reshape


class MHAScaleByModelWidth(_MHA):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        d_model = self.h * self.d_k
        return q @ k.transpose(-2, -1) / math.sqrt(d_model)  # the model's d


class MHANoScale(_MHA):
    def scores(self, q: Tensor, k: Tensor) -> Tensor:
        return torch.matmul(q, k.transpose(-2, -1))


class MHAMaskPolarity(_MHA):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = blocked, like PyTorch's
        return torch.nan_to_num(torch.softmax(scores, dim=-1))


class MHAMaskUnused(_MHA):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        return F.softmax(scores, dim=-1)


class MHAFillMinus1e9(_MHA):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return F.softmax(scores, dim=-1)


class MHASoftmaxOverHeads(_MHA):
    def weights(self, scores: Tensor, mask: Tensor | None) -> Tensor:
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, dim=1))  # dim=1 as in chapter 8's (B, T, T)


class MHANoOutProj(_MHA):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        weights = self.weights(self.scores(q, k), mask)
        return self.merge(weights @ v)  # the concatenated heads are the output


class MHAKeysThroughQProj(_MHA):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.q_proj(key))  # pasted from the line above
        v = self.split(self.v_proj(value))
        weights = self.weights(self.scores(q, k), mask)
        return self.out_proj(self.merge(weights @ v))


# ---------------------------------------------------------------- correct variants


class MHAUnflattenPair(nn.Module):
    """unflatten / flatten for the heads; returns (out, weights)."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1)).transpose(1, 2)  # (B, H, T_q, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1)).transpose(1, 2)
        v = self.v_proj(value).unflatten(-1, (H, -1)).transpose(1, 2)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            visible = mask.expand_as(scores)
            empty = ~visible.any(-1, keepdim=True)
            scores = scores.masked_fill(~visible, float("-inf")).masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        out = torch.einsum("bhqk,bhkd->bhqd", weights, v).transpose(1, 2).flatten(2)
        return self.out_proj(out), weights


class MHAHeadLoop(nn.Module):
    """A Python loop over the heads: slice each head's features, attend, concatenate."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        m = None
        if mask is not None:  # (B or 1, H or 1, T_q or 1, T_k) -> per head below
            m = mask if mask.dim() == 4 else mask.reshape((1,) * (4 - mask.dim()) + mask.shape)
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(self.head_dim)
            mask_h = None if m is None else m[:, h if m.shape[1] > 1 else 0]
            heads.append(_masked_softmax(scores, mask_h) @ V[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAContiguousViewWithOptions(nn.Module):
    """permute + contiguous().view; dropout and need_weights arguments with defaults."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        assert d_model % num_heads == 0
        self.H, self.Dh = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=True)
        self.k_proj = nn.Linear(d_model, d_model, bias=True)
        self.v_proj = nn.Linear(d_model, d_model, bias=True)
        self.out_proj = nn.Linear(d_model, d_model, bias=True)
        self.dropout = dropout

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        B, T_q, D = query.shape
        T_k = key.shape[1]
        q = self.q_proj(query).view(B, T_q, self.H, self.Dh).permute(0, 2, 1, 3)
        k = self.k_proj(key).view(B, T_k, self.H, self.Dh).permute(0, 2, 3, 1)  # (B, H, Dh, T_k)
        v = self.v_proj(value).view(B, T_k, self.H, self.Dh).permute(0, 2, 1, 3)
        scores = (q @ k) * self.Dh**-0.5
        weights = _masked_softmax(scores, mask)
        p = self.dropout if self.training else 0.0
        out = F.dropout(weights, p) @ v if p > 0 else weights @ v
        out = out.permute(0, 2, 1, 3).contiguous().view(B, T_q, D)
        return self.out_proj(out), (weights if need_weights else None)


CASES = [
    BlindCase(
        CHECK,
        "merge_order_dh_h",
        MHAMergeDhFirst,
        "mistake",
        "I merged with permute(0, 2, 3, 1), so the features come out as (Dh, H), interleaving "
        "the heads instead of concatenating them.",
    ),
    BlindCase(
        CHECK,
        "split_as_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as view(B, T, Dh, H) and moved H forward, so a head gets every H-th feature.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitWithoutTranspose,
        "mistake",
        "I reshaped (B, T, D) straight to (B, H, T, Dh) without the transpose.",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeWithoutTranspose,
        "mistake",
        "I merged (B, H, T, Dh) back with reshape(B, T, D) without moving the head axis back.",
    ),
    BlindCase(
        CHECK,
        "merge_view_after_transpose",
        MHAMergeWithView,
        "mistake",
        "I merged with .view after the transpose, which fails on a non-contiguous tensor.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d_model",
        MHAScaleByModelWidth,
        "mistake",
        "I divided the scores by sqrt(d_model) instead of sqrt(d_model / num_heads).",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        MHANoScale,
        "mistake",
        "I forgot the 1/sqrt(Dh) scale.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True, as nn.MultiheadAttention reads its masks.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        MHAMaskUnused,
        "mistake",
        "My attention step takes the mask but never applies it.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFillMinus1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a query with no visible key attends evenly "
        "to the padding.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        MHASoftmaxOverHeads,
        "mistake",
        "I kept softmax(dim=1) from chapter 8, which is the head axis of (B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "out_proj_missing",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads without applying out_proj.",
    ),
    BlindCase(
        CHECK,
        "keys_through_q_proj",
        MHAKeysThroughQProj,
        "mistake",
        "I projected the keys with q_proj (copy-paste), so k_proj is never used.",
    ),
    BlindCase(
        CHECK,
        "unflatten_einsum_pair",
        MHAUnflattenPair,
        "correct",
        "unflatten(-1, (H, -1)) to split, flatten(2) to merge, einsum for the products; "
        "returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHAHeadLoop,
        "correct",
        "A Python loop over the heads on feature slices, concatenated with torch.cat.",
    ),
    BlindCase(
        CHECK,
        "contiguous_view_with_options",
        MHAContiguousViewWithOptions,
        "correct",
        "permute and .contiguous().view, keys permuted straight to (B, H, Dh, T_k); dropout "
        "and need_weights arguments with defaults, returns (out, None).",
    ),
]
