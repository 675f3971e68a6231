"""Blind set B28, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The layers every reader builds, with the book's names; the forward passes differ."""

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
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsTarget(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the second attention: queries, keys and values all from the decoder again
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossQueryFromMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # "attention over the memory": the memory asks, the decoder answers
        x = self._add_norm(x, lambda h: self.cross_attn(memory, h, h, mask=src_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor, tgt_mask: Tensor) -> Tensor:
        # the two masks taken in the order (src_mask, tgt_mask)
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecSelfAttnUnmasked(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        future = ~tgt_mask  # True = hidden, as nn.Transformer's tgt_mask
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=future)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecOwnCausalTriu(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device))
        mask = tgt_mask & causal  # made sure the mask is causal
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossUnmasked(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecPreNormMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h, m = self.norm2(x), self.norm2(memory)  # normalize everything that goes in
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        h = self.norm2(x) if self.norm_first else x
        out = self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
        x = out if self.norm_first else self.norm2(out)  # x comes from the memory now
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNorm3Unused(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm2)  # copied the line above


class DecNormBothSides(_Base):
    def _add_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:  # pre-norm: normalize the input, and the sum as usual
            return norm(x + self.dropout(sublayer(norm(x))))
        return norm(x + self.dropout(sublayer(x)))

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecReturnsCrossWeights(_Base):
    def forward(
        self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        h = self.norm2(x) if self.norm_first else x
        out, weights = self.cross_attn(h, memory, memory, mask=src_mask, need_weights=True)
        x = x + self.dropout(out) if self.norm_first else self.norm2(x + self.dropout(out))
        return self._add_norm(x, self.feed_forward, self.norm3), weights  # to plot alignments


# ---------------------------------------------------------------- correct variants


class DecWrittenOut(nn.Module):
    """Every sub-layer written out in both modes, a dropout module per sub-layer."""

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
        self.drop1, self.drop2, self.drop3 = (nn.Dropout(dropout) for _ in range(3))
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop1(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.drop2(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            x = x + self.drop3(self.feed_forward(self.norm3(x)))
            return x
        x = self.norm1(x + self.drop1(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.drop2(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.drop3(self.feed_forward(x)))


class DecProjectMemoryOnce(nn.Module):
    """The memory projected with project_kv, then attend; masks are keywords with defaults."""

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

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh)

        def self_block(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_block(h: Tensor) -> Tensor:
            return self.cross_attn.attend(h, mem_k, mem_v, mask=src_mask)[0]

        for block, norm in (
            (self_block, self.norm1),
            (cross_block, self.norm2),
            (self.feed_forward, self.norm3),
        ):
            if self.norm_first:
                x = x + self.dropout(block(norm(x)))
            else:
                x = norm(x + self.dropout(block(x)))
        return x


class DecDictOfSublayers(nn.Module):
    """The sub-layers looked up by name in a loop over their order."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        **unused,
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

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        order = ["self", "cross", "ffn"]
        norms = {"self": self.norm1, "cross": self.norm2, "ffn": self.norm3}
        for name in order:
            norm = norms[name]
            h = norm(x) if self.norm_first else x
            if name == "self":
                out = self.self_attn(query=h, key=h, value=h, mask=tgt_mask)[0]
            elif name == "cross":
                out = self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)[0]
            else:
                out = self.feed_forward(h)
            x = x + self.dropout(out)
            if not self.norm_first:
                x = norm(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "My cross-attention takes its keys and values from the decoder's own x, not from the "
        "memory, with the target mask.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecCrossQueryFromMemory,
        "mistake",
        "I called cross_attn(memory, x, x): the memory as the query, the decoder as keys and "
        "values.",
    ),
    BlindCase(
        CHECK,
        "mask_arguments_swapped",
        DecMasksSwapped,
        "mistake",
        "My forward takes (x, memory, src_mask, tgt_mask): the two masks in the opposite order "
        "to the call.",
    ),
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecSelfAttnUnmasked,
        "mistake",
        "I forgot to pass tgt_mask to the self-attention, so a position sees the future.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I inverted tgt_mask (~tgt_mask), thinking True marks the future to hide.",
    ),
    BlindCase(
        CHECK,
        "own_causal_triu",
        DecOwnCausalTriu,
        "mistake",
        "To be safe I combined tgt_mask with my own causal mask, torch.triu of ones, which is "
        "the upper triangle: it lets a position see the future and not the past.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_unmasked",
        DecCrossUnmasked,
        "mistake",
        "I left src_mask out of the cross-attention, so the decoder reads the source padding.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_normalizes_memory",
        DecPreNormMemory,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "No residual connection around the cross-attention: its output replaces x.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossFirst,
        "mistake",
        "I put the cross-attention first and the masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "norm3_unused",
        DecNorm3Unused,
        "mistake",
        "I copied the cross-attention line for the feed-forward one and left norm2 in it; "
        "norm3 is never used.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_also_post",
        DecNormBothSides,
        "mistake",
        "In pre-norm mode I normalize the input of each sub-layer and also the sum after it.",
    ),
    BlindCase(
        CHECK,
        "returns_cross_weights",
        DecReturnsCrossWeights,
        "mistake",
        "My forward returns (x, cross-attention weights) so that I can plot the alignment.",
    ),
    BlindCase(
        CHECK,
        "written_out",
        DecWrittenOut,
        "correct",
        "Both modes written out line by line, one dropout module per sub-layer.",
    ),
    BlindCase(
        CHECK,
        "project_memory_once",
        DecProjectMemoryOnce,
        "correct",
        "project_kv and attend instead of calling the modules; masks as keywords with default "
        "None; a loop over the three sub-layers.",
    ),
    BlindCase(
        CHECK,
        "table_of_sublayers",
        DecDictOfSublayers,
        "correct",
        "The sub-layers looked up by name in a loop, attention called with keyword arguments, "
        "extra keyword arguments accepted and ignored.",
    ),
]
