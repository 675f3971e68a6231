"""Blind set B12, check_decoder_layer (chapter 13): one decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layers; subclasses write forward."""

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

    def sub(self, x: Tensor, f, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(f(norm(x)))
        return norm(x + self.dropout(f(x)))


# ---------------------------------------------------------------- mistakes


class DecNoCrossResidual(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h = self.norm2(x)
            x = self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.sub(x, self.feed_forward, self.norm3)


class DecCrossReadsDecoder(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # keys and values from the decoder, queries from the memory... swapped roles
        x = self.sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecNoCausal(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        pad = tgt_mask[:, :, -1:, :]  # the last row: only padding is hidden there
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=pad)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(
            x, lambda h: self.self_attn(h, h, h, mask=src_mask[..., : h.shape[1]])[0], self.norm1
        )
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=None)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecNoSrcMask(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=~src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecNormedMemoryPreNorm(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:  # I normalized the memory with norm2 as well
            m = self.norm2(memory)
            x = x + self.dropout(self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.sub(x, self.feed_forward, self.norm3)


class DecCrossQueryFromInput(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        y = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # cross-attention queries taken from the block's input, not from the self-attention output
        if self.norm_first:
            q = self.norm2(x)
            y = y + self.dropout(self.cross_attn(q, memory, memory, mask=src_mask)[0])
        else:
            y = self.norm2(y + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.sub(y, self.feed_forward, self.norm3)


class DecNoFinalNormPostNorm(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        if self.norm_first:
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        return x + self.dropout(self.feed_forward(x))  # forgot norm3 after the FFN


# ---------------------------------------------------------------- correct variants


class DecExplicit(_Base):
    """Written out without a helper, post- and pre-norm in two branches."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecLoopOverSublayers(_Base):
    """A loop over (sub-layer, norm) pairs; extra optional arguments with defaults."""

    def forward(self, x, memory, tgt_mask, src_mask, cache=None, need_weights: bool = False):
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for f, norm in steps:
            x = self.sub(x, f, norm)
        return x


class DecCombinedCausal(_Base):
    """Builds the causal mask itself and ands it with the given one (which already holds it)."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        mask = tgt_mask & causal
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


CASES = [
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I forgot the residual connection around the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "cross_reads_decoder",
        DecCrossReadsDecoder,
        "mistake",
        "My cross-attention took keys and values from the decoder (h, h, h), not the memory.",
    ),
    BlindCase(
        CHECK,
        "no_causal_mask",
        DecNoCausal,
        "mistake",
        "I kept only the padding part of tgt_mask (its last row), so the decoder sees the future.",
    ),
    BlindCase(
        CHECK,
        "masks_swapped",
        DecMasksSwapped,
        "mistake",
        "I used the source mask in self-attention and no mask in cross-attention.",
    ),
    BlindCase(
        CHECK,
        "src_mask_unused",
        DecNoSrcMask,
        "mistake",
        "Cross-attention without src_mask, so padded source tokens are read.",
    ),
    BlindCase(
        CHECK,
        "masks_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I inverted both masks (~mask), as nn.Transformer wants them.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossFirst,
        "mistake",
        "I put cross-attention before the masked self-attention.",
    ),
    BlindCase(
        CHECK,
        "memory_normalized_pre_norm",
        DecNormedMemoryPreNorm,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before cross-attention.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_block_input",
        DecCrossQueryFromInput,
        "mistake",
        "Cross-attention takes its queries from the block's input x instead of from the "
        "self-attention sub-layer's output.",
    ),
    BlindCase(
        CHECK,
        "no_norm3_post_norm",
        DecNoFinalNormPostNorm,
        "mistake",
        "In post-norm I forgot the LayerNorm after the feed-forward sub-layer.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicit,
        "correct",
        "Everything written out, one branch for post-norm and one for pre-norm.",
    ),
    BlindCase(
        CHECK,
        "loop_with_extra_args",
        DecLoopOverSublayers,
        "correct",
        "A loop over (sub-layer, norm) pairs; unused optional arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "own_causal_and",
        DecCombinedCausal,
        "correct",
        "I build a causal mask myself and and it with tgt_mask (which changes nothing).",
    ),
]
