"""Blind set B11, check_multihead (chapter 9): multi-head attention as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _msoftmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
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

    def heads(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )


# ---------------------------------------------------------------- mistakes


class MHASplitDhH(_Base):
    def forward(self, query, key, value, mask=None):
        def split(x: Tensor) -> Tensor:
            B, T, _ = x.shape
            return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = w @ v  # (B, H, T, Dh)
        B, H, T, Dh = out.shape
        return self.out_proj(out.permute(0, 2, 3, 1).reshape(B, T, H * Dh))


class MHASplitNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        Tk = key.shape[1]
        q = self.q_proj(query).reshape(B, self.num_heads, Tq, self.head_dim)
        k = self.k_proj(key).reshape(B, self.num_heads, Tk, self.head_dim)
        v = self.v_proj(value).reshape(B, self.num_heads, Tk, self.head_dim)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMergeNoTranspose(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = w @ v  # (B, H, T, Dh)
        return self.out_proj(out.reshape(query.shape[0], query.shape[1], self.d_model))


class MHAScaleByD(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_model), mask)
        return self.out_proj(self.merge(w @ v))


class MHANoScale(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1), mask)
        return self.out_proj(self.merge(w @ v))


class MHAMaskPolarity(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # True = blocked, as in PyTorch
        w = torch.nan_to_num(scores.softmax(-1))
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnused(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), dim=-1)
        return self.out_proj(self.merge(w @ v))


class MHAMinus1e9(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.out_proj(self.merge(scores.softmax(-1) @ v))


class MHAHeadsReversed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        heads = [w[:, h] @ v[:, h] for h in range(self.num_heads)]  # (B, T, Dh) each
        return self.out_proj(torch.cat(heads[::-1], dim=-1))


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.merge(w @ v)  # the heads concatenated are the output


class MHAKeyProjForValues(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


class MHASoftmaxOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(query, key, value)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(torch.softmax(scores, dim=1))
        return self.out_proj(self.merge(w @ v))


class MHAQueryForKeys(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(query))  # self-attention: keys come from the same x
        v = self.split(self.v_proj(value))
        w = _msoftmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        outs = []
        for h in range(self.num_heads):
            sl = slice(h * self.head_dim, (h + 1) * self.head_dim)
            scores = q[..., sl] @ k[..., sl].transpose(1, 2) / math.sqrt(self.head_dim)
            m = None
            if mask is not None:
                full = mask.expand(q.shape[0], self.num_heads, q.shape[1], k.shape[1])
                m = full[:, h]
            outs.append(_msoftmax(scores, m) @ v[..., sl])
        return self.out_proj(torch.cat(outs, dim=-1))


class MHAEinsumWithWeights(_Base):
    def forward(self, query, key, value, mask=None, need_weights: bool = True):
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, Tq, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        w = _msoftmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(-2)
        out = self.out_proj(out)
        return (out, w) if need_weights else out


class MHAPermuteContiguous(nn.Module):
    """permute/contiguous/view instead of transpose/reshape; a dropout (default 0)."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        assert d_model % num_heads == 0
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def _split(self, x: Tensor) -> Tensor:
        B, T, D = x.size()
        return x.view(B, T, self.h, self.d_k).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q = self._split(self.q_proj(query)) * self.d_k**-0.5
        k, v = self._split(self.k_proj(key)), self._split(self.v_proj(value))
        w = _msoftmax(torch.matmul(q, k.permute(0, 1, 3, 2)), mask)
        out = torch.matmul(self.drop(w), v).permute(0, 2, 1, 3).contiguous()
        return self.out_proj(out.view(out.size(0), out.size(1), -1))


CASES = [
    BlindCase(
        CHECK,
        "split_as_Dh_H",
        MHASplitDhH,
        "mistake",
        "I viewed D as (Dh, H) and permuted the H axis forward, so head h takes every H-th "
        "feature.",
    ),
    BlindCase(
        CHECK,
        "split_reshape_without_transpose",
        MHASplitNoTranspose,
        "mistake",
        "I split with reshape(B, H, T, Dh) directly, without view(B, T, H, Dh).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "merge_reshape_without_transpose",
        MHAMergeNoTranspose,
        "mistake",
        "I merged the heads with reshape(B, T, D) straight from (B, H, T, Dh).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_D",
        MHAScaleByD,
        "mistake",
        "I divided by sqrt(d_model) instead of sqrt(head_dim).",
    ),
    BlindCase(CHECK, "no_scale", MHANoScale, "mistake", "I forgot the 1/sqrt(Dh) scale."),
    BlindCase(
        CHECK,
        "mask_polarity",
        MHAMaskPolarity,
        "mistake",
        "I filled -inf where the mask is True, PyTorch's convention.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        MHAMaskUnused,
        "mistake",
        "I took mask as an argument but never applied it.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        MHAMinus1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a query with no visible key attends to the "
        "padding.",
    ),
    BlindCase(
        CHECK,
        "heads_reversed",
        MHAHeadsReversed,
        "mistake",
        "I collected the heads' outputs in a list and concatenated it reversed (heads[::-1]).",
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
        "k_proj_for_values",
        MHAKeyProjForValues,
        "mistake",
        "I projected the values with k_proj (copy-paste), so v_proj is never used.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        MHASoftmaxOverHeads,
        "mistake",
        "I took softmax(dim=1), which with the heads axis is over the heads.",
    ),
    BlindCase(
        CHECK,
        "keys_from_query",
        MHAQueryForKeys,
        "mistake",
        "I projected the keys from query, thinking of self-attention where all three are x.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A Python loop over the heads on feature slices, outputs concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumWithWeights,
        "correct",
        "unflatten to (B, T, H, Dh) and einsum; returns (out, weights) unless need_weights=False.",
    ),
    BlindCase(
        CHECK,
        "permute_contiguous_view",
        MHAPermuteContiguous,
        "correct",
        "permute, contiguous and view; the scale folded into q; a dropout argument (default 0).",
    ),
]
