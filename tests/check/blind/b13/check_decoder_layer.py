"""Blind set B13, check_decoder_layer (chapter 13): decoder blocks as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The layers every case builds, under the book's names."""

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

    def _block(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsX(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._block(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._block(x, self.feed_forward, self.norm3)


class DecNoCausal(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        pad_only = tgt_mask[:, :, -1:, :]  # I only wanted the padding part
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=pad_only)[0], self.norm1)
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


class DecSrcMaskUnused(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._block(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._block(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._block(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._block(x, self.feed_forward, self.norm3)


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h, m = self.norm2(x), self.norm2(memory)  # normalize both inputs of the sub-layer
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._block(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        future = ~tgt_mask  # True where a position must be hidden
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=future)[0], self.norm1)
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


class DecIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecSelfAttnForCross(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._block(
            x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


class DecCausalOnMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T, S = x.shape[1], memory.shape[1]
        causal = torch.ones(T, S, dtype=torch.bool, device=x.device).tril()
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask & causal)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


class DecPostNormNormsShifted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.self_attn(*[self.norm1(x)] * 3, mask=tgt_mask)[0])
            x = x + self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        # post-norm: the first LayerNorm on the input, then one after each sub-layer
        x = self.norm1(x)
        x = self.norm2(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm3(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return x + self.dropout(self.feed_forward(x))


# ---------------------------------------------------------------- correct variants


class DecExplicit(_Base):
    """Both normalization schemes written out, no helper."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        a, _ = self.self_attn(x, x, x, mask=tgt_mask)
        x = self.norm1(x + self.dropout(a))
        c, _ = self.cross_attn(x, memory, memory, mask=src_mask)
        x = self.norm2(x + self.dropout(c))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecRebuildsCausal(_Base):
    """Adds its own causal mask to tgt_mask (redundant) and an optional cache argument."""

    def forward(
        self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor, cache=None
    ) -> Tensor:
        T = x.shape[1]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        mask = tgt_mask & causal
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


class DecSublayerList(_Base):
    """The three sub-layers looped over as (function, norm) pairs."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            if self.norm_first:
                x = self.dropout(fn(norm(x))) + x
            else:
                x = norm(self.dropout(fn(x)) + x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_x",
        DecCrossReadsX,
        "mistake",
        "My cross-attention took keys and values from x instead of the memory.",
    ),
    BlindCase(
        CHECK,
        "no_causal_mask",
        DecNoCausal,
        "mistake",
        "I kept only the padding row of tgt_mask, so self-attention sees the future.",
    ),
    BlindCase(
        CHECK,
        "src_mask_unused",
        DecSrcMaskUnused,
        "mistake",
        "I forgot to pass src_mask to the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossFirst,
        "mistake",
        "I put the cross-attention before the masked self-attention.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "No residual connection around the cross-attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normed",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I inverted tgt_mask, thinking True marks the positions to hide.",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        DecIgnoresNormFirst,
        "mistake",
        "I always wrote post-norm and ignored norm_first.",
    ),
    BlindCase(
        CHECK,
        "self_attn_reused_for_cross",
        DecSelfAttnForCross,
        "mistake",
        "I called self.self_attn for the cross-attention too; cross_attn is never used.",
    ),
    BlindCase(
        CHECK,
        "causal_mask_on_memory",
        DecCausalOnMemory,
        "mistake",
        "I also put a causal mask on the cross-attention to the source.",
    ),
    BlindCase(
        CHECK,
        "postnorm_norms_shifted",
        DecPostNormNormsShifted,
        "mistake",
        "Post-norm: I normalized the input first and left the FFN's output unnormalized.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicit,
        "correct",
        "Pre-norm and post-norm written out line by line, without a helper.",
    ),
    BlindCase(
        CHECK,
        "rebuilds_causal_mask",
        DecRebuildsCausal,
        "correct",
        "I AND a causal mask of my own into tgt_mask, and take an unused cache=None.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop",
        DecSublayerList,
        "correct",
        "A loop over (sub-layer, norm) pairs, residual added on the other side.",
    ),
]
