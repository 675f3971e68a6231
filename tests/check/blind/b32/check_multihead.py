"""Blind set B32, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The four projections under PyTorch's names; forward differs from class to class."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.d_model, self.num_heads = d_model, num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, T, Dh)

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


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.merge(w @ v)  # the concatenation is the output, I thought


class MHAValueFromKey(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(key))  # key passed where value belongs
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


class MHASoftmaxOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=1))  # dim=1 was the keys in (B, T, T)
        return self.out_proj(self.merge(w @ v))


class MHAScaleBySqrtH(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.num_heads), mask)
        return self.out_proj(self.merge(w @ v))


class MHAReversedHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        out = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask) @ v
        heads = [out[:, h] for h in range(self.num_heads)]  # (B, T, Dh) each
        return self.out_proj(torch.cat(heads[::-1], dim=-1))  # the last head first


class MHAPermuteMerge(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        out = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask) @ v
        B, H, T, Dh = out.shape
        merged = out.permute(0, 2, 3, 1).reshape(B, T, H * Dh)  # (B, T, Dh, H): interleaved
        return self.out_proj(merged)


class MHAMaskUnsqueezed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


class MHAReturnsWeightsFirst(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return w, self.out_proj(self.merge(w @ v))


class MHANoBias(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)  # as in the single-head chapter
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        Tk = key.shape[1]
        q = self.q_proj(query).view(B, Tq, self.num_heads, -1).transpose(1, 2)
        k = self.k_proj(key).view(B, Tk, self.num_heads, -1).transpose(1, 2)
        v = self.v_proj(value).view(B, Tk, self.num_heads, -1).transpose(1, 2)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj((w @ v).transpose(1, 2).reshape(B, Tq, D))


class MHASplitNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        Tk = key.shape[1]
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).reshape(B, H, Tq, Dh)  # straight into (B, H, T, Dh)
        k = self.k_proj(key).reshape(B, H, Tk, Dh)
        v = self.v_proj(value).reshape(B, H, Tk, Dh)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(Dh), mask)
        return self.out_proj(self.merge(w @ v))


class MHAScaleByD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_model), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskTrueBlocks(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(
            q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), None if mask is None else ~mask
        )
        return self.out_proj(self.merge(w @ v))


class MHAOutProjPerHead(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        out = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask) @ v
        out = out.mean(dim=1)  # average the heads, (B, T, Dh) ...
        return self.out_proj(out.repeat(1, 1, self.num_heads))  # ... tiled back to D


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        Dh = self.head_dim
        m = None
        if mask is not None:
            m = mask.expand(query.shape[0], self.num_heads, query.shape[1], key.shape[1])
        heads = []
        for h in range(self.num_heads):
            sl = slice(h * Dh, (h + 1) * Dh)
            scores = Q[..., sl] @ K[..., sl].transpose(-2, -1) / math.sqrt(Dh)
            heads.append(_msoftmax(scores, None if m is None else m[:, h]) @ V[..., sl])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumBTHD(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, _ = query.shape
        Tk = key.shape[1]
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, Tq, H, Dh)
        k = self.k_proj(key).view(B, Tk, H, Dh)
        v = self.v_proj(value).view(B, Tk, H, Dh)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / Dh**0.5
        w = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, Tq, H * Dh)
        return self.out_proj(out)


class MHAChunkStack(_Base):
    def forward(self, query, key, value, mask=None):
        H = self.num_heads

        def split(x: Tensor) -> Tensor:
            return torch.stack(x.chunk(H, dim=-1), dim=1)  # (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) * self.head_dim**-0.5, mask)
        out = torch.cat((w @ v).unbind(dim=1), dim=-1)  # heads side by side
        return self.out_proj(out), w


class MHAFused(_Base):
    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        q, k, v = self.heads(query, key, value)
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            has_key = mask.any(-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
            out = out.masked_fill(~has_key, 0.0)
        return self.out_proj(self.merge(out))


CASES = [
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads without applying out_proj.",
    ),
    BlindCase(
        CHECK,
        "value_from_key",
        MHAValueFromKey,
        "mistake",
        "I projected key with v_proj instead of value (same tensor in self-attention).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        MHASoftmaxOverHeads,
        "mistake",
        "I kept softmax(dim=1) from the 3-D case; on (B, H, T, T) that is the heads axis.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_H",
        MHAScaleBySqrtH,
        "mistake",
        "I divided the scores by sqrt(num_heads) instead of sqrt(head_dim).",
    ),
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAReversedHeads,
        "mistake",
        "I concatenated the heads in reverse order.",
    ),
    BlindCase(
        CHECK,
        "permute_merge",
        MHAPermuteMerge,
        "mistake",
        "I merged with permute(0, 2, 3, 1), which interleaves the heads' features.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed",
        MHAMaskUnsqueezed,
        "mistake",
        "I added a head axis to a mask that already had one (mask.unsqueeze(1)).",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        MHAReturnsWeightsFirst,
        "mistake",
        "I returned (weights, out) instead of out or (out, weights).",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        MHANoBias,
        "mistake",
        "I made the four projections bias-free, as in the single-head chapter.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I reshaped (B, T, D) straight to (B, H, T, Dh) without a transpose.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_D",
        MHAScaleByD,
        "mistake",
        "I divided by sqrt(d_model) instead of sqrt(head_dim).",
    ),
    BlindCase(
        CHECK,
        "mask_true_blocks",
        MHAMaskTrueBlocks,
        "mistake",
        "I inverted the mask as nn.MultiheadAttention wants it.",
    ),
    BlindCase(
        CHECK,
        "heads_averaged",
        MHAOutProjPerHead,
        "mistake",
        "I averaged the heads and tiled the result back to width D before out_proj.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A loop over heads on column slices of the full projections, then torch.cat.",
    ),
    BlindCase(
        CHECK,
        "einsum_bthd",
        MHAEinsumBTHD,
        "correct",
        "einsum on the (B, T, H, Dh) layout without transposing.",
    ),
    BlindCase(
        CHECK,
        "chunk_stack_pair",
        MHAChunkStack,
        "correct",
        "Heads split with chunk + stack, merged with unbind + cat; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "fused_with_flag",
        MHAFused,
        "correct",
        "F.scaled_dot_product_attention with empty rows opened then zeroed; an extra flag.",
    ),
]
