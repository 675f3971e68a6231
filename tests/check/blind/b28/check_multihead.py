"""Blind set B28, check_multihead (chapter 9): multi-head attention as readers write it."""

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


class _Projections(nn.Module):
    """The four D -> D projections with bias, under PyTorch's names."""

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
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, T, Dh)

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
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.merge(w @ v)  # the heads concatenated are the output


class MHAValuesWithKeyProj(_Projections):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copied the line above and forgot to rename
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


class MHASelfOnly(_Projections):
    def forward(self, query, key, value, mask=None):
        x = query  # self-attention: query, key and value are the same tensor
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


class MHAQueryLengthForKeys(_Projections):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, T, H, Dh).transpose(1, 2)
        k = self.k_proj(key).view(B, T, H, Dh).transpose(1, 2)  # same B, T, H, Dh
        v = self.v_proj(value).view(B, T, H, Dh).transpose(1, 2)
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(Dh), mask)
        return self.out_proj((w @ v).transpose(1, 2).reshape(B, T, D))


class MHAViewAfterTranspose(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = w @ v  # (B, H, T_q, Dh)
        B, H, T, Dh = out.shape
        return self.out_proj(out.transpose(1, 2).view(B, T, H * Dh))


class MHASoftmaxOverQueries(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.nan_to_num(scores.softmax(dim=2))  # (B, H, T_q, T_k): dim 2
        return self.out_proj(self.merge(w @ v))


class MHAMaskUnsqueezedAgain(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(w @ v))


class MHADropoutDefault(_Projections):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__(d_model, num_heads)
        self.dropout = nn.Dropout(0.1)

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(self.dropout(w) @ v))


class MHANoBias(nn.Module):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)  # attention needs no bias
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, query, key, value, mask=None):
        B = query.shape[0]

        def split(x: Tensor) -> Tensor:
            return x.view(B, -1, self.h, self.dh).transpose(1, 2)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj((w @ v).transpose(1, 2).reshape(B, -1, self.h * self.dh))


class MHAReturnsWeightsFirst(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        w = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return w, self.out_proj(self.merge(w @ v))


class MHAScaleBySqrtHeads(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[1])  # q is (B, H, T, Dh)
        w = _masked_softmax(scores, mask)
        return self.out_proj(self.merge(w @ v))


class MHANoEmptyRowGuard(_Projections):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # -inf, as the book says
        w = torch.softmax(scores, dim=-1)
        return self.out_proj(self.merge(w @ v))


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(nn.Module):
    """One head at a time on its slice of the projections, concatenated in order."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        Dh = Q.shape[-1] // self.num_heads
        m = None if mask is None else mask
        heads = []
        for h in range(self.num_heads):
            s = slice(h * Dh, (h + 1) * Dh)
            scores = Q[..., s] @ K[..., s].transpose(1, 2) / math.sqrt(Dh)  # (B, T_q, T_k)
            mh = None
            if m is not None:
                mh = m.expand(Q.shape[0], self.num_heads, Q.shape[1], K.shape[1])[:, h]
            heads.append(_masked_softmax(scores, mh) @ V[..., s])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumWithWeights(nn.Module):
    """einsum over named axes; returns the pair (out, weights); an extra dropout argument."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.H = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.p = dropout

    def forward(self, query, key, value, mask=None):
        H = self.H
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        weights = _masked_softmax(scores, mask)
        dropped = F.dropout(weights, self.p, self.training)
        out = torch.einsum("bhqk,bkhd->bqhd", dropped, v).flatten(-2)
        return self.out_proj(out), weights


class MHAContiguousView(_Projections):
    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        T_k = key.shape[1]
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, T_q, H, Dh).permute(0, 2, 1, 3)
        k = self.k_proj(key).view(B, T_k, H, Dh).permute(0, 2, 3, 1)  # already (B, H, Dh, T_k)
        v = self.v_proj(value).view(B, T_k, H, Dh).permute(0, 2, 1, 3)
        w = _masked_softmax((q @ k) * Dh**-0.5, mask)
        out = (w @ v).permute(0, 2, 1, 3).contiguous().view(B, T_q, D)
        return self.out_proj(out)


class MHAGuardedSDPA(_Projections):
    """F.scaled_dot_product_attention, with rows that see no key handled before and after."""

    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is None:
            return self.out_proj(self.merge(F.scaled_dot_product_attention(q, k, v)))
        seen = mask.any(-1, keepdim=True)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~seen)
        return self.out_proj(self.merge(out.masked_fill(~seen, 0.0)))


CASES = [
    BlindCase(
        CHECK,
        "no_out_proj",
        MHANoOutProj,
        "mistake",
        "I concatenated the heads and returned that, never applying out_proj.",
    ),
    BlindCase(
        CHECK,
        "values_through_k_proj",
        MHAValuesWithKeyProj,
        "mistake",
        "I projected the values with k_proj (a copy-paste slip) instead of v_proj.",
    ),
    BlindCase(
        CHECK,
        "query_used_for_all",
        MHASelfOnly,
        "mistake",
        "I projected query three times, as if it were always self-attention, and ignored key "
        "and value.",
    ),
    BlindCase(
        CHECK,
        "keys_split_with_query_length",
        MHAQueryLengthForKeys,
        "mistake",
        "I took T from the query and reused it to split the keys and values, which breaks "
        "when T_k differs from T_q.",
    ),
    BlindCase(
        CHECK,
        "view_after_transpose",
        MHAViewAfterTranspose,
        "mistake",
        "I merged the heads with transpose(1, 2).view(...), which fails on the "
        "non-contiguous tensor.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        MHASoftmaxOverQueries,
        "mistake",
        "I took the softmax over dim=2 of (B, H, T_q, T_k), the queries.",
    ),
    BlindCase(
        CHECK,
        "mask_given_head_axis_again",
        MHAMaskUnsqueezedAgain,
        "mistake",
        "I unsqueezed the mask on axis 1 for the heads, though it already broadcasts to "
        "(B, H, T_q, T_k).",
    ),
    BlindCase(
        CHECK,
        "dropout_on_by_default",
        MHADropoutDefault,
        "mistake",
        "I added nn.Dropout(0.1) on the weights, so in training mode the output is random.",
    ),
    BlindCase(
        CHECK,
        "projections_without_bias",
        MHANoBias,
        "mistake",
        "I made the four projections bias-free, though the docstring says with bias.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_first",
        MHAReturnsWeightsFirst,
        "mistake",
        "I return (weights, out) instead of (out, weights).",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_num_heads",
        MHAScaleBySqrtHeads,
        "mistake",
        "I scaled by sqrt(q.shape[1]), which after the split is H, not Dh.",
    ),
    BlindCase(
        CHECK,
        "no_guard_for_empty_rows",
        MHANoEmptyRowGuard,
        "mistake",
        "I filled masked scores with -inf and took a plain softmax, so a query with no visible "
        "key gives NaN.",
    ),
    BlindCase(
        CHECK,
        "loop_over_heads",
        MHALoopOverHeads,
        "correct",
        "A Python loop over the heads on slices of the projections, concatenated in order.",
    ),
    BlindCase(
        CHECK,
        "einsum_returns_pair",
        MHAEinsumWithWeights,
        "correct",
        "unflatten and einsum over named axes; returns (out, weights); an extra dropout "
        "argument that defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "permute_contiguous_view",
        MHAContiguousView,
        "correct",
        "permute for the heads, the keys permuted straight to (B, H, Dh, T_k), and "
        ".contiguous().view(...) to merge.",
    ),
    BlindCase(
        CHECK,
        "guarded_sdpa",
        MHAGuardedSDPA,
        "correct",
        "F.scaled_dot_product_attention, with a query that sees no key given every key and "
        "its output set to 0.",
    ),
]
