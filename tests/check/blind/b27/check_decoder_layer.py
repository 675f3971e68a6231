"""Blind set B27, check_decoder_layer (chapter 13): one decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layers under the book's names; each case writes its own ``forward``."""

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

    def _sub(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsTarget(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # second attention: the decoder's own states again, under the decoder's mask
        x = self._sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossRolesSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # queries from the encoder, keys and values from the decoder
        x = self._sub(x, lambda h: self.cross_attn(memory, h, h)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCausalMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # the target's padding is at the end, so I used the padding row of tgt_mask only
        padding = tgt_mask[:, :, -1:, :]  # (B, 1, 1, T)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=padding)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossUnmasked(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        future = ~tgt_mask  # True = hidden, as nn.Transformer's tgt_mask
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=future)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecNormsShuffled(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm3)
        return self._sub(x, self.feed_forward, self.norm2)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecPreNormMemoryToo(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        h, m = self.norm2(x), self.norm2(memory)  # normalize what goes into the sub-layer
        x = x + self.dropout(self.cross_attn(h, m, m, src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecOwnCausalTriu(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device))
        mask = tgt_mask & causal
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecReturnsWeights(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> tuple:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        h = self.norm2(x) if self.norm_first else x
        out, weights = self.cross_attn(h, memory, memory, src_mask, need_weights=True)
        x = x + self.dropout(out) if self.norm_first else self.norm2(x + self.dropout(out))
        x = self._sub(x, self.feed_forward, self.norm3)
        return x, weights  # the cross-attention map, to plot the alignment


class DecPreNormStreamNormalized(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0])
            x = self.norm2(x)
            x = x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0])
            x = self.norm3(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecMaskArgsSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor, tgt_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecSharedAttention(_Base):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.cross_attn = self.self_attn  # one attention module, used twice

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecWrittenOut(nn.Module):
    """Every sub-layer written out, the two modes in two branches."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop1, self.drop2, self.drop3 = (nn.Dropout(dropout) for _ in range(3))

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop1(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.drop2(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            h = self.norm3(x)
            x = x + self.drop3(self.feed_forward(h))
        else:
            x = self.norm1(x + self.drop1(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.drop2(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            x = self.norm3(x + self.drop3(self.feed_forward(x)))
        return x


class DecProjectedMemory(_Base):
    """The memory projected with ``project_kv`` first, then ``attend``; masks by keyword."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh)

        def self_block(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_block(h: Tensor) -> Tensor:
            return self.cross_attn.attend(h, mem_k, mem_v, mask=src_mask)[0]

        x = self._sub(x, self_block, self.norm1)
        x = self._sub(x, cross_block, self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecListOfSublayers(_Base):
    """The three sub-layers in a list, optional masks and an unused ``cache`` argument."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
        cache: object | None = None,
    ) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, tgt_mask, fused=True)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, src_mask, fused=True)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            if self.norm_first:
                x = torch.add(x, self.dropout(fn(norm(x))))
            else:
                x = norm(torch.add(x, self.dropout(fn(x))))
        return x


class DecTorchLayerNormCalls(_Base):
    """Pre-norm as a residual stream plus branch; post-norm as branch plus input."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            stream = x
            a = self.norm1(stream)
            stream = stream + self.dropout(self.self_attn(a, a, a, tgt_mask)[0])
            c = self.norm2(stream)
            stream = stream + self.dropout(self.cross_attn(c, memory, memory, src_mask)[0])
            return stream + self.dropout(self.feed_forward(self.norm3(stream)))
        y = self.norm1(self.dropout(self.self_attn(x, x, x, tgt_mask)[0]) + x)
        z = self.norm2(self.dropout(self.cross_attn(y, memory, memory, src_mask)[0]) + y)
        return self.norm3(self.dropout(self.feed_forward(z)) + z)


CASES = [
    BlindCase(
        CHECK,
        "cross_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "My cross-attention takes keys and values from x instead of the memory, so the block "
        "never reads the encoder.",
    ),
    BlindCase(
        CHECK,
        "cross_roles_swapped",
        DecCrossRolesSwapped,
        "mistake",
        "I gave the cross-attention the memory as queries and the decoder states as keys and "
        "values.",
    ),
    BlindCase(
        CHECK,
        "padding_row_only",
        DecNoCausalMask,
        "mistake",
        "For self-attention I kept only the last row of tgt_mask as a padding mask, dropping "
        "the causal part.",
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
        "cross_unmasked",
        DecCrossUnmasked,
        "mistake",
        "I did not pass src_mask to the cross-attention, so the source padding is attended.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I inverted tgt_mask, thinking True marks the hidden positions as in nn.Transformer.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I left out the residual connection around the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "norms_shuffled",
        DecNormsShuffled,
        "mistake",
        "I used norm3 after the cross-attention and norm2 after the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "cross_first",
        DecCrossFirst,
        "mistake",
        "I put the cross-attention before the masked self-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normalized",
        DecPreNormMemoryToo,
        "mistake",
        "In pre-norm mode I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "own_causal_triu",
        DecOwnCausalTriu,
        "mistake",
        "I built my own causal mask with torch.triu and combined it with tgt_mask.",
    ),
    BlindCase(
        CHECK,
        "always_post_norm",
        DecAlwaysPostNorm,
        "mistake",
        "I kept the norm_first argument but only wrote post-norm.",
    ),
    BlindCase(
        CHECK,
        "returns_weights",
        DecReturnsWeights,
        "mistake",
        "I return (x, cross-attention weights) so that the alignment can be plotted.",
    ),
    BlindCase(
        CHECK,
        "prenorm_stream_normalized",
        DecPreNormStreamNormalized,
        "mistake",
        "For pre-norm I normalized x itself before each sub-layer and added the branch to the "
        "normalized x.",
    ),
    BlindCase(
        CHECK,
        "mask_arguments_swapped",
        DecMaskArgsSwapped,
        "mistake",
        "My forward takes (x, memory, src_mask, tgt_mask), the masks in the other order.",
    ),
    BlindCase(
        CHECK,
        "one_attention_module",
        DecSharedAttention,
        "mistake",
        "I reused self_attn for the cross-attention (cross_attn = self_attn), one set of "
        "projections for both.",
    ),
    BlindCase(
        CHECK,
        "written_out",
        DecWrittenOut,
        "correct",
        "Every sub-layer written out in two branches, one dropout module per sub-layer.",
    ),
    BlindCase(
        CHECK,
        "projected_memory",
        DecProjectedMemory,
        "correct",
        "The memory projected once with project_kv, both attentions through attend.",
    ),
    BlindCase(
        CHECK,
        "list_of_sublayers_fused",
        DecListOfSublayers,
        "correct",
        "A loop over a list of (sub-layer, norm) pairs with fused attention; the masks default "
        "to None and an unused cache argument.",
    ),
    BlindCase(
        CHECK,
        "stream_and_branch",
        DecTorchLayerNormCalls,
        "correct",
        "Pre-norm written as a residual stream variable; post-norm sums written branch + input.",
    ),
]
