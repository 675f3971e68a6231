"""Blind set B26, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, shared by the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Projections(nn.Module):
    """The constructor of the skeleton, and right split and merge helpers."""

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
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)


# ---------------------------------------------------------------- mistakes


class MHANoOutProj(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.merge(weights @ v)  # the heads, concatenated


class MHAQueryThroughKProj(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.k_proj(query))  # queries and keys are compared in the same space
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAValueThroughKProj(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAMaskUnsqueezed(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is not None:
            mask = mask.unsqueeze(1)  # the same mask for every head
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHASelfOnly(_Projections):
    def forward(self, query, key, value, mask=None):
        x = query  # self-attention: query, key and value are the same sequence
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAMergeWithView(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = weights @ v
        B, H, T, Dh = out.shape
        return self.out_proj(out.transpose(1, 2).view(B, T, H * Dh))


class MHASoftmaxOverHeads(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, H, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=1))
        return self.out_proj(self.merge(weights @ v))


class MHATimeFirst(_Projections):
    def forward(self, query, key, value, mask=None):
        T_q, B, D = query.shape  # (T, B, D) as nn.MultiheadAttention takes it
        T_k = key.shape[0]
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).view(T_q, B, H, Dh).permute(1, 2, 0, 3)
        k = self.k_proj(key).view(T_k, B, H, Dh).permute(1, 2, 0, 3)
        v = self.v_proj(value).view(T_k, B, H, Dh).permute(1, 2, 0, 3)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(Dh), mask)
        out = (weights @ v).permute(2, 0, 1, 3).reshape(T_q, B, D)
        return self.out_proj(out)


class MHADropoutOn(_Projections):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__(d_model, num_heads)
        self.dropout = nn.Dropout(0.1)  # the paper's rate

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(self.dropout(weights) @ v))


class MHAWeightsFirst(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return weights, self.out_proj(self.merge(weights @ v))


class MHAScaleByHeads(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scale = 1 / math.sqrt(self.num_heads)  # one factor per head
        weights = _masked_softmax(q @ k.transpose(-2, -1) * scale, mask)
        return self.out_proj(self.merge(weights @ v))


# ---------------------------------------------------------------- correct variants


class MHAHeadLoop(_Projections):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            scores = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(self.head_dim)
            head_mask = None
            if mask is not None:
                B, T_q, T_k = scores.shape
                head_mask = mask.broadcast_to(B, self.num_heads, T_q, T_k)[:, h]
            heads.append(_masked_softmax(scores, head_mask) @ v[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsum(_Projections):
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        B, T_q, D = query.shape
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).reshape(B, T_q, H, Dh)
        k = self.k_proj(key).reshape(B, -1, H, Dh)
        v = self.v_proj(value).reshape(B, -1, H, Dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * Dh**-0.5
        weights = _masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T_q, D)
        return self.out_proj(out), weights


class MHAFused(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.h = num_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=True)
        self.k_proj = nn.Linear(d_model, d_model, bias=True)
        self.v_proj = nn.Linear(d_model, d_model, bias=True)
        self.out_proj = nn.Linear(d_model, d_model, bias=True)

    def _heads(self, x: Tensor) -> Tensor:
        return x.unflatten(-1, (self.h, -1)).permute(0, 2, 1, 3)  # (B, H, T, Dh)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        q = self._heads(self.q_proj(query))
        k = self._heads(self.k_proj(key))
        v = self._heads(self.v_proj(value))
        p = self.dropout if self.training else 0.0
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        else:
            seen = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~seen, dropout_p=p)
            out = out.masked_fill(~seen, 0.0)
        return self.out_proj(out.permute(0, 2, 1, 3).flatten(2))


CASES = [
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I return the concatenated heads and forgot to apply out_proj.",
    ),
    BlindCase(
        CHECK,
        "query_through_k_proj",
        MHAQueryThroughKProj,
        "mistake",
        "I projected the queries with k_proj too, so that queries and keys share one space.",
    ),
    BlindCase(
        CHECK,
        "value_through_k_proj",
        MHAValueThroughKProj,
        "mistake",
        "Copy-paste slip: the values go through k_proj instead of v_proj.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_for_heads",
        MHAMaskUnsqueezed,
        "mistake",
        "I added a head axis to the mask with unsqueeze(1), although it already broadcasts.",
    ),
    BlindCase(
        CHECK,
        "self_attention_only",
        MHASelfOnly,
        "mistake",
        "I projected the query for all three, as in self-attention, ignoring key and value.",
    ),
    BlindCase(
        CHECK,
        "merge_with_view",
        MHAMergeWithView,
        "mistake",
        "I merged the heads with .view after the transpose, which fails on the "
        "non-contiguous tensor.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        MHASoftmaxOverHeads,
        "mistake",
        "I took the softmax over dim=1, the heads, instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "time_first_inputs",
        MHATimeFirst,
        "mistake",
        "I read the inputs as (T, B, D), as nn.MultiheadAttention takes them by default.",
    ),
    BlindCase(
        CHECK,
        "dropout_point_one",
        MHADropoutOn,
        "mistake",
        "I put nn.Dropout(0.1) on the weights, the paper's rate, which is on in training mode.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        MHAWeightsFirst,
        "mistake",
        "I return (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "scale_by_num_heads",
        MHAScaleByHeads,
        "mistake",
        "I scaled the scores by 1/sqrt(H), the number of heads, instead of 1/sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHAHeadLoop,
        "correct",
        "A Python loop over the heads, each on its own slice of Dh features, then torch.cat "
        "and out_proj.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsum,
        "correct",
        "Heads as a (B, T, H, Dh) reshape and einsum for both products; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "fused_sdpa",
        MHAFused,
        "correct",
        "unflatten/permute for the heads and F.scaled_dot_product_attention; rows with no "
        "visible key set to 0; an extra dropout argument defaults to 0.",
    ),
]
