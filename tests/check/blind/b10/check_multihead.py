"""Blind set B10, check_multihead (chapter 9): multi-head attention as readers write it."""

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
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The four projections under PyTorch's names, and right helpers for the mistakes to reuse."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
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


class MHAMergeWrongOrder(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = w @ v  # (B, H, T, Dh)
        B, H, T, Dh = out.shape
        out = out.permute(0, 2, 3, 1).reshape(B, T, H * Dh)  # (B, T, Dh, H) flattened
        return self.out_proj(out)


class MHASplitDhH(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        def split(x: Tensor) -> Tensor:
            B, T, _ = x.shape
            return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)  # (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = (w @ v).permute(0, 2, 3, 1).flatten(2)  # back the same way
        return self.out_proj(out)


class MHASplitNoTranspose(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        def split(x: Tensor) -> Tensor:
            B, T, D = x.shape
            return x.reshape(B, self.num_heads, T, self.head_dim)  # (B, H, T, Dh)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = (w @ v).transpose(1, 2).reshape(query.shape)
        return self.out_proj(out)


class MHAMergeNoTranspose(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = (w @ v).reshape(query.shape)  # (B, H, T, Dh) -> (B, T, D)
        return self.out_proj(out)


class MHAScaleByDModel(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        d_model = query.shape[-1]
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_model), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskPolarity(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # as for nn.MultiheadAttention
        w = torch.nan_to_num(scores.softmax(-1))
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        out = F.scaled_dot_product_attention(q, k, v)  # the fast kernel
        return self.out_proj(self.merge(out))


class MHAMinus1e9(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(F.softmax(scores, dim=-1) @ v))


class MHANoOutProj(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.merge(w @ v)  # the heads concatenated


class MHAQueryLengthForKeys(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        B, T, D = query.shape
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, T, H, Dh).transpose(1, 2)
        k = self.k_proj(key).view(B, T, H, Dh).transpose(1, 2)  # same B, T, D for all three
        v = self.v_proj(value).view(B, T, H, Dh).transpose(1, 2)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(Dh), mask)
        return self.out_proj((w @ v).transpose(1, 2).reshape(B, T, D))


class MHAKeyProjForValues(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copied from the line above
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskHeadAxisAdded(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = self.heads(query, key, value)
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        """The notes' picture: one head at a time on its slice of features, then concatenated."""
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        head_mask = None
        if mask is not None:
            while mask.dim() < 4:
                mask = mask.unsqueeze(0)
            head_mask = mask
        outs = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            scores = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(self.head_dim)
            m = None if head_mask is None else head_mask[:, min(h, head_mask.shape[1] - 1)]
            outs.append(_masked_softmax(scores, m) @ v[..., cols])
        return self.out_proj(torch.cat(outs, dim=-1))


class MHAEinsumPair(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Returns (out, weights); heads split by unflatten, products by einsum."""
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        weights = _masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(2)
        return self.out_proj(out), weights


class MHAPermuteContiguous(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        assert d_model % num_heads == 0
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        B = query.size(0)
        q, k, v = (
            proj(x).reshape(B, -1, self.h, self.d_k).permute(0, 2, 1, 3)
            for proj, x in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value))
        )
        scores = torch.matmul(q, k.permute(0, 1, 3, 2)) / self.d_k**0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            none_visible = torch.isinf(scores).all(-1, keepdim=True)
            scores = scores.masked_fill(none_visible, 0.0)
            p = torch.softmax(scores, -1).masked_fill(none_visible, 0.0)
        else:
            p = torch.softmax(scores, -1)
        x = torch.matmul(self.drop(p), v).permute(0, 2, 1, 3).contiguous()
        return self.out_proj(x.view(B, -1, self.h * self.d_k))


class MHAGuardedSDPA(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        """F.scaled_dot_product_attention, with rows that see no key handled as in the book."""
        q, k, v = self.heads(query, key, value)
        if mask is None:
            return self.out_proj(self.merge(F.scaled_dot_product_attention(q, k, v)))
        has_key = mask.any(-1, keepdim=True)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
        return self.out_proj(self.merge(out.masked_fill(~has_key, 0.0)))


CASES = [
    BlindCase(
        CHECK,
        "merge_dh_h_order",
        MHAMergeWrongOrder,
        "mistake",
        "I merged the heads with permute(0, 2, 3, 1), so the features come out as (Dh, H), "
        "interleaving the heads.",
    ),
    BlindCase(
        CHECK,
        "split_dh_h",
        MHASplitDhH,
        "mistake",
        "I split D as view(B, T, Dh, H) and moved H to the front, so each head gets every H-th "
        "feature instead of a block.",
    ),
    BlindCase(
        CHECK,
        "split_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I split with reshape(B, H, T, Dh) directly, without view(B, T, H, Dh).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "merge_without_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged (B, H, T, Dh) back to (B, T, D) with a reshape, without moving the head axis "
        "back first.",
    ),
    BlindCase(
        CHECK,
        "scale_sqrt_d_model",
        MHAScaleByDModel,
        "mistake",
        "I divided the scores by sqrt(d_model) instead of sqrt(head_dim).",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        MHANoScale,
        "mistake",
        "I forgot to scale the scores.",
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
        "I used F.scaled_dot_product_attention and forgot to pass it the mask.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAMinus1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key attends to the padding.",
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
        "query_length_for_keys",
        MHAQueryLengthForKeys,
        "mistake",
        "I took B, T, D from the query and used that T to split the keys and values too, which "
        "breaks when the keys have another length.",
    ),
    BlindCase(
        CHECK,
        "k_proj_for_values",
        MHAKeyProjForValues,
        "mistake",
        "I projected the values with k_proj (a copy-paste slip), so v_proj is never used.",
    ),
    BlindCase(
        CHECK,
        "mask_head_axis_added",
        MHAMaskHeadAxisAdded,
        "mistake",
        "I added a head axis to the mask with unsqueeze(1), which is wrong for a mask that is "
        "already (B, 1, 1, T_k).",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A Python loop over the heads on column slices, concatenated before out_proj.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumPair,
        "correct",
        "unflatten and einsum, no transposes; returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "permute_contiguous_view",
        MHAPermuteContiguous,
        "correct",
        "reshape + permute to split, permute + contiguous + view to merge; other attribute "
        "names for the sizes and an extra dropout argument (0 by default).",
    ),
    BlindCase(
        CHECK,
        "guarded_sdpa",
        MHAGuardedSDPA,
        "correct",
        "F.scaled_dot_product_attention with the mask, rows that see no key given every key "
        "and then zeroed, as the book's fused_attention does.",
    ),
]
