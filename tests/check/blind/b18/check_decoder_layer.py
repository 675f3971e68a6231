"""Blind set B18, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layers with the book's names; each case writes its own ``forward``."""

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

    def _add_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm) -> Tensor:
        """The right Add & Norm, for the mistakes that are elsewhere."""
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsTarget(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # cross-attention over x itself, with the causal mask since keys are the target
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossQueryFromMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # queries from the encoder, keys and values from the decoder
        x = self._add_norm(x, lambda h: self.cross_attn(memory, h, h)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoTgtMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoSrcMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecMasksInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        tgt_block, src_block = ~tgt_mask, ~src_mask  # True = hidden, as in nn.Transformer
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_block)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_block)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecOwnCausalTriu(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).triu()  # to be safe
        mask = tgt_mask & causal
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossBeforeSelf(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecParallelSublayers(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # every sub-layer reads the block's input x
        a = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        c = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(a + c - x, self.feed_forward, self.norm3)


class DecPreNormMemoryToo(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h, m = self.norm2(x), self.norm2(memory)  # normalize both inputs of the sub-layer
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecPreNormAddsNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            for sublayer, norm in (
                (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
                (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
                (self.feed_forward, self.norm3),
            ):
                h = norm(x)
                x = h + self.dropout(sublayer(h))  # residual from the normalized vector
            return x
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecMasksSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNormsTwoThreeSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, self.feed_forward, self.norm2)  # FFN second, then cross
        return self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3
        )


# ---------------------------------------------------------------- correct variants


class DecExplicit(nn.Module):
    """Its own __init__ with one dropout per sub-layer and every step written out."""

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
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout1(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout2(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            x = x + self.dropout3(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout1(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout2(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x


class DecHelpersWithDefaults(_Base):
    """Helper methods per sub-layer, masks optional, and the memory's keys/values projected
    with project_kv and read with attend (the cache's path)."""

    def _self_block(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]

    def _cross_block(self, h: Tensor, memory: Tensor, mask: Tensor | None) -> Tensor:
        k, v = self.cross_attn.project_kv(memory, memory)
        return self.cross_attn.attend(h, k, v, mask=mask)[0]

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        x = self._add_norm(x, lambda h: self._self_block(h, tgt_mask), self.norm1)
        x = self._add_norm(x, lambda h: self._cross_block(h, memory, src_mask), self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecRecomputedCausal(_Base):
    """ANDs a causal mask of its own (tril) into tgt_mask, which changes nothing."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.size(1)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        self_mask = tgt_mask & causal
        for i, norm in enumerate((self.norm1, self.norm2, self.norm3)):
            h = norm(x) if self.norm_first else x
            if i == 0:
                out = self.self_attn(h, h, h, mask=self_mask)[0]
            elif i == 1:
                out = self.cross_attn(h, memory, memory, mask=src_mask)[0]
            else:
                out = self.feed_forward(h)
            x = x + self.dropout(out)
            if not self.norm_first:
                x = norm(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "My cross-attention attends over the decoder's own x (keys and values from x, with the "
        "target mask) instead of over the memory.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecCrossQueryFromMemory,
        "mistake",
        "I took the cross-attention's queries from the memory and its keys and values from the "
        "decoder.",
    ),
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecNoTgtMask,
        "mistake",
        "I left out tgt_mask in the decoder's self-attention, so it sees the future.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_unmasked",
        DecNoSrcMask,
        "mistake",
        "I did not pass src_mask to the cross-attention, so the source padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "masks_inverted",
        DecMasksInverted,
        "mistake",
        "I inverted both masks, as nn.Transformer wants them (True = blocked).",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask_triu",
        DecOwnCausalTriu,
        "mistake",
        "I ANDed in a causal mask of my own to be safe, but built it with triu instead of "
        "tril, so each position sees itself and the future.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "I put cross-attention first and the masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I forgot the residual connection around the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "parallel_sublayers",
        DecParallelSublayers,
        "mistake",
        "Self-attention and cross-attention both read the block's input x, and I summed their "
        "results; the cross-attention queries do not come from the first sub-layer.",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_memory",
        DecPreNormMemoryToo,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        DecPreNormAddsNormed,
        "mistake",
        "In pre-norm I added the sub-layer's output to norm(x) instead of to x.",
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
        "ffn_before_cross",
        DecNormsTwoThreeSwapped,
        "mistake",
        "I put the feed-forward network second and the cross-attention last.",
    ),
    BlindCase(
        CHECK,
        "explicit_three_dropouts",
        DecExplicit,
        "correct",
        "Every step written out, with dropout1..dropout3 instead of one dropout module.",
    ),
    BlindCase(
        CHECK,
        "helpers_project_kv",
        DecHelpersWithDefaults,
        "correct",
        "Helper methods per sub-layer, masks default to None, and the cross-attention through "
        "project_kv and attend.",
    ),
    BlindCase(
        CHECK,
        "own_tril_causal_and_loop",
        DecRecomputedCausal,
        "correct",
        "A loop over the three sub-layers, and a causal mask of my own (tril) ANDed into "
        "tgt_mask, which it already contains.",
    ),
]
