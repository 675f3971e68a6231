"""Chapter 9, "Your turn": ``MyMultiHeadAttention(d_model, num_heads)``.

``q_proj``, ``k_proj``, ``v_proj``, ``out_proj`` (D -> D, with bias); ``forward(query, key, value,
mask=None)`` returns ``(B, T_q, D)`` (or ``(out, weights)``); H heads of ``Dh = D / H``, each
``softmax(q k^T / sqrt(Dh)) v``, concatenated in order and mixed by ``out_proj``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
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
        return x.view(B, T, self.h, self.dh).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)


# --- mistakes ---------------------------------------------------------------------------------


class NoOutputProjection(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.merge(weights @ v)  # the concatenated heads are the answer


class ValuesThroughKProj(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.k_proj(value))  # copy-paste: k_proj on the values
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(weights @ v))


class KeysFromTheQuery(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        x = query  # self-attention: query, key and value are the same tensor
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(weights @ v))


class MaskUnsqueezedTwice(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            mask = mask[:, None, None, :]  # a padding mask (B, T_k) -> (B, 1, 1, T_k)
        weights = _softmax(scores, mask)
        return self.out_proj(self.merge(weights @ v))


class SoftmaxOverHeads(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=1)  # dim 1 after the split
        return self.out_proj(self.merge(weights @ v))


class ScaledTwice(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q = self.split(self.q_proj(query)) / math.sqrt(self.dh)  # scale q once ...
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)  # ... and again
        return self.out_proj(self.merge(weights @ v))


class DropoutOnWeights(_Base):
    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__(d_model, num_heads)
        self.dropout = nn.Dropout(0.1)  # as in the paper

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(self.dropout(weights) @ v))


class SqueezedOutput(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dh), mask)
        return self.out_proj(self.merge(weights @ v)).squeeze()  # tidy the shape


class LoopCatOnTime(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for i in range(self.h):
            part = slice(i * self.dh, (i + 1) * self.dh)
            m = None if mask is None else mask[:, 0] if mask.dim() == 4 else mask
            w = _softmax(Q[..., part] @ K[..., part].transpose(-2, -1) / math.sqrt(self.dh), m)
            heads.append(w @ V[..., part])
        return self.out_proj(torch.cat(heads, dim=1))  # dim 1 is the time axis


class KeyPaddingPolarityFromTorch(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))  # key_padding_mask style: True = pad
            scores = torch.nan_to_num(scores, neginf=-1e30)
        weights = torch.softmax(scores, dim=-1)
        return self.out_proj(self.merge(weights @ v))


# --- correct variants -------------------------------------------------------------------------


class HeadLoop(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        B, T_q, T_k = query.shape[0], query.shape[1], key.shape[1]
        m = None if mask is None else torch.broadcast_to(mask, (B, self.h, T_q, T_k))
        heads = []
        for i in range(self.h):
            cols = slice(i * self.dh, (i + 1) * self.dh)
            head_mask = None if m is None else m[:, i]  # (B, T_q, T_k)
            scores = Q[..., cols] @ K[..., cols].transpose(-2, -1) / math.sqrt(self.dh)
            heads.append(_softmax(scores, head_mask) @ V[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class EinsumHeads(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        B, T_q, D = query.shape
        H = self.num_heads
        q = self.q_proj(query).reshape(B, T_q, H, D // H)
        k = self.k_proj(key).reshape(B, key.shape[1], H, D // H)
        v = self.v_proj(value).reshape(B, value.shape[1], H, D // H)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(D // H)
        weights = _softmax(scores, mask)
        p = self.dropout if self.training else 0.0
        mixed = torch.einsum("bhqk,bkhd->bqhd", F.dropout(weights, p), v)
        return self.out_proj(mixed.reshape(B, T_q, D)), weights


class PermuteContiguousView(_Base):
    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, None]:
        def heads(x: Tensor) -> Tensor:
            return x.reshape(x.shape[0], x.shape[1], self.h, self.dh).permute(0, 2, 1, 3)

        q, k, v = heads(self.q_proj(query)), heads(self.k_proj(key)), heads(self.v_proj(value))
        scores = torch.matmul(q, k.permute(0, 1, 3, 2)) * self.dh**-0.5
        if mask is not None:
            visible = mask.expand_as(scores)
            empty = ~visible.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(~visible, float("-inf")).masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        out = torch.matmul(weights, v).permute(0, 2, 1, 3).contiguous()
        return self.out_proj(out.view(out.shape[0], out.shape[1], -1)), None


CASES = [
    BlindCase(
        CHECK,
        "no_output_projection",
        NoOutputProjection,
        "mistake",
        "I returned the concatenated heads without passing them through out_proj.",
    ),
    BlindCase(
        CHECK,
        "values_through_k_proj",
        ValuesThroughKProj,
        "mistake",
        "Copy-paste slip: I projected the values with k_proj instead of v_proj.",
    ),
    BlindCase(
        CHECK,
        "keys_from_the_query",
        KeysFromTheQuery,
        "mistake",
        "I projected the query tensor three times, as in self-attention, ignoring key and value.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_twice",
        MaskUnsqueezedTwice,
        "mistake",
        "I indexed the mask with [:, None, None, :] as if it were a (B, T_k) padding mask, which "
        "adds axes to a mask that already broadcasts.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_heads",
        SoftmaxOverHeads,
        "mistake",
        "I took the softmax over dim=1, which after the split is the head axis, not the keys.",
    ),
    BlindCase(
        CHECK,
        "scaled_twice",
        ScaledTwice,
        "mistake",
        "I divided q by sqrt(Dh) after the split and the scores by sqrt(Dh) again.",
    ),
    BlindCase(
        CHECK,
        "dropout_on_weights",
        DropoutOnWeights,
        "mistake",
        "I added dropout 0.1 on the attention weights, which is active since the module is in "
        "training mode.",
    ),
    BlindCase(
        CHECK,
        "squeezed_output",
        SqueezedOutput,
        "mistake",
        "I called .squeeze() on the output, which drops the batch or time axis when it is 1.",
    ),
    BlindCase(
        CHECK,
        "loop_cat_on_time",
        LoopCatOnTime,
        "mistake",
        "In my loop over heads I concatenated the head outputs along dim 1 (time) instead of the "
        "feature axis.",
    ),
    BlindCase(
        CHECK,
        "key_padding_polarity_from_torch",
        KeyPaddingPolarityFromTorch,
        "mistake",
        "I filled the scores where the mask is True, as nn.MultiheadAttention's key_padding_mask "
        "does, and patched the -inf rows with nan_to_num.",
    ),
    BlindCase(
        CHECK,
        "head_loop",
        HeadLoop,
        "correct",
        "I looped over the heads, slicing Dh columns of each projection, and concatenated on the "
        "last axis.",
    ),
    BlindCase(
        CHECK,
        "einsum_heads",
        EinsumHeads,
        "correct",
        "I kept the heads as (B, T, H, Dh) and did both products with einsum; I return (out, "
        "weights) and have a dropout argument that defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "permute_contiguous_view",
        PermuteContiguousView,
        "correct",
        "I split with reshape and permute, merged with permute().contiguous().view(), and "
        "return (out, None).",
    ),
]
