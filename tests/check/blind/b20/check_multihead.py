"""Blind set B20, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


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


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_Base):
    def forward(self, query, key, value, mask=None):
        def split(x):
            B, T, _ = x.shape
            return x.view(B, T, self.dh, self.h).permute(0, 3, 1, 2)  # (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = (w @ v).permute(0, 2, 3, 1).reshape(query.shape)  # back the same way
        return self.out_proj(out)


class MHASplitNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        Tk = key.shape[1]
        q = self.q_proj(query).view(B, self.h, Tq, self.dh)  # straight to (B, H, T, Dh)
        k = self.k_proj(key).view(B, self.h, Tk, self.dh)
        v = self.v_proj(value).view(B, self.h, Tk, self.dh)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        out = w @ v  # (B, H, T, Dh)
        return self.out_proj(out.reshape(query.shape))


class MHAScaleD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(query.shape[-1]), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskInverted(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # nn.MultiheadAttention's way
        w = torch.softmax(scores, dim=-1).nan_to_num()
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), dim=-1)
        return self.out_proj(self.merge(w @ v))


class MHAFill1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(scores.softmax(-1) @ v))


class MHAHeadsReversed(_Base):
    def forward(self, query, key, value, mask=None):
        heads = []
        q, k = self.q_proj(query), self.k_proj(key)
        v = self.v_proj(value)
        if mask is not None:
            mask = mask.expand(q.shape[0], self.h, q.shape[1], k.shape[1])
        for i in range(self.h):
            sl = slice(i * self.dh, (i + 1) * self.dh)
            scores = q[..., sl] @ k[..., sl].transpose(1, 2) / math.sqrt(self.dh)
            w = _msoftmax(scores, None if mask is None else mask[:, i])
            heads.insert(0, w @ v[..., sl])  # prepend each head
        return self.out_proj(torch.cat(heads, dim=-1))


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.merge(w @ v)  # the heads, concatenated


class MHAValueFromKey(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(key))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHASoftmaxQueries(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=2).nan_to_num()
        return self.out_proj(self.merge(w @ v))


class MHAReusedQProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k = self.split(self.q_proj(query)), self.split(self.q_proj(key))  # one projection
        v = self.split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHALoop(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        m = (
            None
            if mask is None
            else torch.broadcast_to(mask, (q.shape[0], self.h, q.shape[1], k.shape[1]))
        )
        heads = []
        for i in range(self.h):
            sl = slice(i * self.dh, (i + 1) * self.dh)
            scores = q[..., sl] @ k[..., sl].transpose(1, 2) / math.sqrt(self.dh)
            heads.append(_msoftmax(scores, None if m is None else m[:, i]) @ v[..., sl])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumPair(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self.q_proj(query).unflatten(-1, (self.h, self.dh))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (self.h, self.dh))
        v = self.v_proj(value).unflatten(-1, (self.h, self.dh))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.dh**0.5
        w = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(-2)
        return self.out_proj(out), w


class MHABookAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=True)
        self.k_proj = nn.Linear(d_model, d_model, bias=True)
        self.v_proj = nn.Linear(d_model, d_model, bias=True)
        self.out_proj = nn.Linear(d_model, d_model, bias=True)
        self.dropout = dropout

    def forward(self, query, key, value, mask=None):
        from transformer_tutorial.attention import attention

        B, T_q, D = query.shape
        H = self.num_heads

        def heads(t: Tensor) -> Tensor:
            return t.reshape(B, -1, H, D // H).permute(0, 2, 1, 3)

        p = self.dropout if self.training else 0.0
        out, _ = attention(
            heads(self.q_proj(query)), heads(self.k_proj(key)), heads(self.v_proj(value)), mask, p
        )
        return self.out_proj(out.permute(0, 2, 1, 3).reshape(B, T_q, D))


class MHAPackedProj(_Base):
    def forward(self, query, key, value, mask=None):
        # q/k/v weights stacked like nn.MultiheadAttention's in_proj_weight
        W = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        b = torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])
        D = W.shape[1]
        q = nn.functional.linear(query, W[:D], b[:D])
        k = nn.functional.linear(key, W[D : 2 * D], b[D : 2 * D])
        v = nn.functional.linear(value, W[2 * D :], b[2 * D :])
        q, k, v = self.split(q), self.split(k), self.split(v)
        w = _msoftmax((q / math.sqrt(self.dh)) @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


CASES = [
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I viewed D as (Dh, H) and permuted the heads to the front.",
    ),
    BlindCase(
        CHECK,
        "split_view_only",
        MHASplitNoTranspose,
        "mistake",
        "I split with view(B, H, T, Dh) directly, no transpose.",
    ),
    BlindCase(
        CHECK,
        "merge_reshape_only",
        MHAMergeNoTranspose,
        "mistake",
        "I merged with reshape(B, T, D) without moving the head axis back.",
    ),
    BlindCase(CHECK, "scale_sqrt_D", MHAScaleD, "mistake", "I scaled by sqrt(d_model)."),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the 1/sqrt(Dh)."),
    BlindCase(
        CHECK,
        "mask_inverted",
        MHAMaskInverted,
        "mistake",
        "I filled -inf where the mask is True, as for nn.MultiheadAttention.",
    ),
    BlindCase(CHECK, "mask_unused", MHAMaskUnused, "mistake", "I never applied the mask."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAFill1e9,
        "mistake",
        "I masked with masked_fill(mask == 0, -1e9).",
    ),
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAHeadsReversed,
        "mistake",
        "In my loop over heads I inserted each at the front of the list.",
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
        "values_from_key",
        MHAValueFromKey,
        "mistake",
        "I projected key instead of value with v_proj.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxQueries,
        "mistake",
        "I took the softmax over dim=2.",
    ),
    BlindCase(
        CHECK,
        "q_proj_for_keys",
        MHAReusedQProj,
        "mistake",
        "I used q_proj for the keys too.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoop,
        "correct",
        "A loop over heads with feature slices, concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumPair,
        "correct",
        "unflatten and einsum, returning (out, weights).",
    ),
    BlindCase(
        CHECK,
        "book_attention_permute",
        MHABookAttention,
        "correct",
        "reshape/permute into heads and chapter 6's attention; optional dropout.",
    ),
    BlindCase(
        CHECK,
        "packed_in_proj",
        MHAPackedProj,
        "correct",
        "The three weights stacked like in_proj_weight, sliced with F.linear.",
    ),
]
