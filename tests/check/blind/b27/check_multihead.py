"""Blind set B27, check_multihead (chapter 9): multi-head attention modules as readers write them."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, as chapter 6 taught it."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _MHA(nn.Module):
    """The four layers under PyTorch's names, and a right split and merge."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h = num_heads
        self.d_head = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_head).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, _, T, _ = x.shape
        return x.transpose(1, 2).reshape(B, T, self.h * self.d_head)  # (B, T, D)


# ---------------------------------------------------------------- mistakes


class MHAKeysFromQuery(_MHA):
    def forward(self, query, key, value, mask=None):
        x = query  # self-attention: query, key and value are the same sequence
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAKeysThroughQProj(_MHA):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.q_proj(key))  # queries and keys live in the same space
        v = self.split(self.v_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(weights @ v))


class MHANoOutProj(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.merge(weights @ v)  # the heads, concatenated


class MHAMergeWithView(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        out = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask) @ v
        B, H, T, Dh = out.shape
        return self.out_proj(out.transpose(1, 2).view(B, T, H * Dh))


class MHAOneLengthForAll(_MHA):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape  # the sequence length
        q = self.q_proj(query).view(B, T, self.h, self.d_head).transpose(1, 2)
        k = self.k_proj(key).view(B, T, self.h, self.d_head).transpose(1, 2)
        v = self.v_proj(value).view(B, T, self.h, self.d_head).transpose(1, 2)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj((weights @ v).transpose(1, 2).reshape(B, T, D))


class MHAScaleByHeads(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.h)  # one scale per head
        return self.out_proj(self.merge(_masked_softmax(scores, mask) @ v))


class MHASoftmaxOverHeads(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, H, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(F.softmax(scores, dim=1))
        return self.out_proj(self.merge(weights @ v))


class MHAMaskUnsqueezed(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is not None:
            mask = mask.unsqueeze(1)  # the same mask for all heads
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAReturnsWeightsFirst(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        return weights, self.out_proj(self.merge(weights @ v))


class MHAHeadsAveraged(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), mask)
        weights = weights.mean(dim=1, keepdim=True)  # one attention map, as nn.MultiheadAttention
        return self.out_proj(self.merge(weights @ v))


class MHAMaskedFillZero(_MHA):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores * mask  # zero out the scores of padded keys
        return self.out_proj(self.merge(torch.softmax(scores, dim=-1) @ v))


class MHAKeyPaddingPolarity(_MHA):
    def forward(self, query, key, value, mask=None):
        B, T_k, D = key.shape
        q_in, k_in, v_in = (t.transpose(0, 1) for t in (query, key, value))  # (T, B, D)
        attn_mask = None if mask is None else mask.expand(B, self.h, query.shape[1], T_k)
        out, _ = F.multi_head_attention_forward(
            q_in,
            k_in,
            v_in,
            D,
            self.h,
            None,  # in_proj_weight: the three separate ones below
            torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]),
            None,
            None,
            False,
            0.0,
            self.out_proj.weight,
            self.out_proj.bias,
            use_separate_proj_weight=True,
            q_proj_weight=self.q_proj.weight,
            k_proj_weight=self.k_proj.weight,
            v_proj_weight=self.v_proj.weight,
            attn_mask=None if attn_mask is None else attn_mask.reshape(B * self.h, -1, T_k),
            need_weights=False,
        )
        return out.transpose(0, 1)


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_MHA):
    """One head at a time on its slice of the features, then concatenated."""

    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        B, T_q, T_k = query.shape[0], query.shape[1], key.shape[1]
        if mask is not None:
            mask = torch.broadcast_to(mask, (B, self.h, T_q, T_k))
        heads, maps = [], []
        for h in range(self.h):
            sl = slice(h * self.d_head, (h + 1) * self.d_head)
            m = None if mask is None else mask[:, h]
            scores = q[..., sl] @ k[..., sl].transpose(-2, -1) / math.sqrt(self.d_head)
            w = _masked_softmax(scores, m)
            heads.append(w @ v[..., sl])
            maps.append(w)
        return self.out_proj(torch.cat(heads, dim=-1)), torch.stack(maps, dim=1)


class MHAEinsumRearrange(_MHA):
    """Heads split by reshape + permute and merged with einsum through out_proj's weight."""

    def forward(self, query, key, value, mask=None):
        B, T_q, _ = query.shape
        T_k = key.shape[1]
        q = self.q_proj(query).reshape(B, T_q, self.h, self.d_head).permute(0, 2, 1, 3)
        k = self.k_proj(key).reshape(B, T_k, self.h, self.d_head).permute(0, 2, 1, 3)
        v = self.v_proj(value).reshape(B, T_k, self.h, self.d_head).permute(0, 2, 1, 3)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.d_head**-0.5
        weights = _masked_softmax(scores, mask)
        heads = torch.einsum("bhqk,bhkd->bqhd", weights, v)  # (B, T_q, H, Dh)
        W_o = self.out_proj.weight.view(-1, self.h, self.d_head)  # (D, H, Dh)
        return torch.einsum("bqhd,ehd->bqe", heads, W_o) + self.out_proj.bias


class MHAFusedWithGuard(_MHA):
    """F.scaled_dot_product_attention, empty rows opened and their output zeroed."""

    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(value))
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
        "keys_values_from_query",
        MHAKeysFromQuery,
        "mistake",
        "I projected the query three times, as in self-attention, and never used key and value.",
    ),
    BlindCase(
        CHECK,
        "keys_through_q_proj",
        MHAKeysThroughQProj,
        "mistake",
        "I projected the keys with q_proj (a copy-paste slip), leaving k_proj unused.",
    ),
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I returned the concatenated heads without applying out_proj.",
    ),
    BlindCase(
        CHECK,
        "merge_with_view",
        MHAMergeWithView,
        "mistake",
        "I merged the heads with transpose(1, 2).view(...), which fails on the non-contiguous "
        "tensor.",
    ),
    BlindCase(
        CHECK,
        "one_length_for_all",
        MHAOneLengthForAll,
        "mistake",
        "I took T from the query and used it to reshape the keys and values too, so T_k != T_q "
        "breaks.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_heads",
        MHAScaleByHeads,
        "mistake",
        "I divided the scores by sqrt(num_heads) instead of sqrt(d_head).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        MHASoftmaxOverHeads,
        "mistake",
        "I wrote softmax(dim=1), which on (B, H, T_q, T_k) normalizes over the heads.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_again",
        MHAMaskUnsqueezed,
        "mistake",
        "I added a head axis to the mask with unsqueeze(1), though it already broadcasts to "
        "(B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        MHAReturnsWeightsFirst,
        "mistake",
        "I return the pair the wrong way round, (weights, out).",
    ),
    BlindCase(
        CHECK,
        "heads_share_averaged_map",
        MHAHeadsAveraged,
        "mistake",
        "I averaged the heads' weights into one map before applying it to every head's values.",
    ),
    BlindCase(
        CHECK,
        "scores_multiplied_by_mask",
        MHAMaskedFillZero,
        "mistake",
        "I multiplied the scores by the mask, so padded keys get score 0 rather than -inf.",
    ),
    BlindCase(
        CHECK,
        "torch_functional_polarity",
        MHAKeyPaddingPolarity,
        "mistake",
        "I called F.multi_head_attention_forward with my layers' weights and passed the mask "
        "as attn_mask, where True means blocked.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A loop over heads on slices of the projected features; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "einsum_through_out_proj",
        MHAEinsumRearrange,
        "correct",
        "reshape + permute to split; einsum for both products and for out_proj's weight viewed "
        "as (D, H, Dh).",
    ),
    BlindCase(
        CHECK,
        "fused_with_guard",
        MHAFusedWithGuard,
        "correct",
        "F.scaled_dot_product_attention with the boolean mask, empty rows opened then zeroed; an "
        "unused need_weights argument.",
    ),
]
