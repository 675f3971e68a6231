"""Blind set B15, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layers; each case below overrides forward only."""

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


class DecNoCausalMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossReadsItself(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossUnmasked(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNormsMixed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, self.feed_forward, self.norm2)  # FFN second, as in the encoder
        return self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3
        )


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            m = self.norm2(memory)  # normalise everything that goes into the sub-layer
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCausalInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        mask = tgt_mask & future  # hide ... the past?
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecCrossQueriesFromInput(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        y = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the cross-attention's queries from the block's input x, the residual from y
        q = self.norm2(x) if self.norm_first else x
        c = self.cross_attn(q, memory, memory, mask=src_mask)[0]
        y = y + self.dropout(c) if self.norm_first else self.norm2(y + self.dropout(c))
        return self._add_norm(y, self.feed_forward, self.norm3)


class DecMemoryAsQuery(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # attention(query, key, value): I read it as (memory looks at the decoder)
        x = self._add_norm(x, lambda h: self.cross_attn(memory, h, h)[0].mean(1, True), self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecInline(nn.Module):
    """Written out step by step, F.dropout, the masks passed by keyword."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.p, self.norm_first = dropout, norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        p, train = self.p, self.training
        if self.norm_first:
            h = self.norm1(x)
            x = x + F.dropout(self.self_attn(query=h, key=h, value=h, mask=tgt_mask)[0], p, train)
            h = self.norm2(x)
            out, _ = self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)
            x = x + F.dropout(out, p, train)
            return x + F.dropout(self.feed_forward(self.norm3(x)), p, train)
        x = self.norm1(x + F.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0], p, train))
        out, _ = self.cross_attn(x, memory, memory, mask=src_mask)
        x = self.norm2(x + F.dropout(out, p, train))
        return self.norm3(x + F.dropout(self.feed_forward(x), p, train))


class DecLoopOverSublayers(_Base):
    """A loop over (norm, sub-layer) pairs; extra optional arguments with defaults."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
        return_weights: bool = False,
    ) -> Tensor:
        weights = []

        def self_block(h: Tensor) -> Tensor:
            out, w = self.self_attn(h, h, h, mask=tgt_mask)
            weights.append(w)
            return out

        def cross_block(h: Tensor) -> Tensor:
            out, w = self.cross_attn(h, memory, memory, mask=src_mask)
            weights.append(w)
            return out

        steps = [(self.norm1, self_block), (self.norm2, cross_block)]
        steps.append((self.norm3, self.feed_forward))
        for norm, fn in steps:
            x = self._add_norm(x, fn, norm)
        return (x, weights) if return_weights else x


class DecExplicitCausal(_Base):
    """ANDs its own causal mask into tgt_mask (already causal: the same mask)."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        mask = tgt_mask & causal
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


CASES = [
    BlindCase(
        CHECK,
        "no_self_attention_mask",
        DecNoCausalMask,
        "mistake",
        "I called the decoder's self-attention without tgt_mask, so it sees the future.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_on_itself",
        DecCrossReadsItself,
        "mistake",
        "My cross-attention takes its keys and values from the decoder, not from memory.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_unmasked",
        DecCrossUnmasked,
        "mistake",
        "I left src_mask out of the cross-attention, so padded source tokens are read.",
    ),
    BlindCase(
        CHECK,
        "masks_swapped",
        DecMasksSwapped,
        "mistake",
        "I gave src_mask to the self-attention and tgt_mask to the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "No residual connection around the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_cross_attention",
        DecNormsMixed,
        "mistake",
        "I put the feed-forward network second and the cross-attention last.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_memory_normalized",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "causal_mask_inverted",
        DecCausalInverted,
        "mistake",
        "I built my own causal mask with triu(diagonal=1), which marks the future as allowed.",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        DecIgnoresNormFirst,
        "mistake",
        "I always wrote the post-norm block, whatever norm_first says.",
    ),
    BlindCase(
        CHECK,
        "cross_queries_from_input",
        DecCrossQueriesFromInput,
        "mistake",
        "The cross-attention's queries come from the block's input x instead of the output "
        "of the self-attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "memory_as_query",
        DecMemoryAsQuery,
        "mistake",
        "I passed memory as the query and the decoder states as keys and values, then "
        "averaged over the source to get back one vector.",
    ),
    BlindCase(
        CHECK,
        "inline_functional_dropout",
        DecInline,
        "correct",
        "Written out inline for each norm placement, with F.dropout and keyword arguments.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        DecLoopOverSublayers,
        "correct",
        "A loop over (norm, sub-layer) pairs; masks default to None; an extra return_weights "
        "flag that is False by default.",
    ),
    BlindCase(
        CHECK,
        "extra_causal_and",
        DecExplicitCausal,
        "correct",
        "ANDs a causal mask of its own into tgt_mask, which changes nothing.",
    ),
]
