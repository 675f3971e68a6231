"""Blind set B20, check_decoder_layer (chapter 13): decoder blocks as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layer names and a right forward; each case overrides one piece."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsX(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # cross-attention: keys and values from h as well (copied the self-attention line)
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoCausal(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # no tgt_mask
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossNoPadding(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h, m = self.norm2(x), self.norm2(memory)  # normalized the memory as well
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecNoResidualCross(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h = self.norm2(x)
            x = self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])  # no x +
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecOwnCausalOnly(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))  # my own mask
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecStrictlyPast(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        # "no peeking": also hid the diagonal, so a position cannot see itself
        past = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=-1)
        past[0, 0] = True  # the first position needs one key
        mask = tgt_mask & past
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecSelfAttnReused(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the same attention module for the cross-attention (cross_attn made but not used)
        x = self._add_norm(
            x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossQueryFromInput(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x0 = x
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the queries of the cross-attention taken from the block input
        q = self.norm2(x0) if self.norm_first else x0
        a = self.dropout(self.cross_attn(q, memory, memory, mask=src_mask)[0])
        x = x + a if self.norm_first else self.norm2(x + a)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecPreNormFfnNotNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        if self.norm_first:
            return x + self.dropout(self.feed_forward(x))  # forgot norm3 here
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecArgOrder(_Base):
    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor, tgt_mask: Tensor) -> Tensor:
        # masks in the order I build them (source first): the checker passes tgt_mask first
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct


class DecTwoBodies(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            h = self.norm3(x)
            return x + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecProjectAttend(_Base):
    """project_kv/attend, as the book's cache path does, and a loop over the sub-layers."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        def self_block(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_block(h: Tensor) -> Tensor:
            k, v = self.cross_attn.project_kv(memory, memory)
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        for fn, norm in (
            (self_block, self.norm1),
            (cross_block, self.norm2),
            (self.feed_forward, self.norm3),
        ):
            x = self._add_norm(x, fn, norm)
        return x


class DecMasksRebuilt(_Base):
    """Combined the given mask with my own causal mask (redundant, same result), kept
    dropout modules per sub-layer."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.dropouts = nn.ModuleList(nn.Dropout(dropout) for _ in range(3))

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        self_mask = tgt_mask & causal
        subs = [
            (lambda h: self.self_attn(h, h, h, self_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for (fn, norm), drop in zip(subs, self.dropouts):
            if self.norm_first:
                x = x + drop(fn(norm(x)))
            else:
                x = norm(drop(fn(x)) + x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_reads_x",
        DecCrossReadsX,
        "mistake",
        "cross-attention with keys and values from the decoder, copied from the self-attention",
    ),
    BlindCase(CHECK, "no_causal", DecNoCausal, "mistake", "self-attention called without tgt_mask"),
    BlindCase(
        CHECK,
        "masks_swapped",
        DecMasksSwapped,
        "mistake",
        "src_mask on the self-attention, tgt_mask on the cross-attention",
    ),
    BlindCase(
        CHECK,
        "cross_no_padding",
        DecCrossNoPadding,
        "mistake",
        "cross-attention without src_mask",
    ),
    BlindCase(CHECK, "tgt_mask_inverted", DecTgtMaskInverted, "mistake", "passed ~tgt_mask"),
    BlindCase(
        CHECK,
        "cross_first",
        DecCrossFirst,
        "mistake",
        "cross-attention before the masked self-attention",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normed",
        DecPreNormMemoryNormed,
        "mistake",
        "pre-norm: also ran the memory through norm2 before the cross-attention",
    ),
    BlindCase(
        CHECK,
        "no_residual_cross",
        DecNoResidualCross,
        "mistake",
        "no residual connection around the cross-attention",
    ),
    BlindCase(
        CHECK,
        "own_causal_only",
        DecOwnCausalOnly,
        "mistake",
        "built my own tril causal mask and used it instead of tgt_mask (target padding lost)",
    ),
    BlindCase(
        CHECK,
        "strictly_past",
        DecStrictlyPast,
        "mistake",
        "causal mask with diagonal=-1, a position cannot see itself",
    ),
    BlindCase(
        CHECK,
        "self_attn_reused",
        DecSelfAttnReused,
        "mistake",
        "used self_attn for the cross-attention too",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_input",
        DecCrossQueryFromInput,
        "mistake",
        "cross-attention queries taken from the block input instead of the self-attention output",
    ),
    BlindCase(
        CHECK,
        "prenorm_ffn_not_normed",
        DecPreNormFfnNotNormed,
        "mistake",
        "pre-norm: forgot norm3 before the feed-forward",
    ),
    BlindCase(
        CHECK,
        "arg_order",
        DecArgOrder,
        "mistake",
        "forward(x, memory, src_mask, tgt_mask): the masks in the other order",
    ),
    BlindCase(CHECK, "two_bodies", DecTwoBodies, "correct", "each mode written out in full"),
    BlindCase(
        CHECK,
        "project_attend",
        DecProjectAttend,
        "correct",
        "project_kv + attend and a loop over (sub-layer, norm) pairs",
    ),
    BlindCase(
        CHECK,
        "masks_rebuilt",
        DecMasksRebuilt,
        "correct",
        "and-ed my own causal mask into tgt_mask (redundant), one dropout per sub-layer",
    ),
]
