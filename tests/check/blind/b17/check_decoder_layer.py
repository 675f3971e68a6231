"""Blind set B17, check_decoder_layer (chapter 13): one decoder block as readers write it."""

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

    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        """The right Add & Norm, used by the cases whose slip is elsewhere."""
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecNoCausal(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        # only the target padding: the last row of tgt_mask, for every query
        pad_only = tgt_mask[:, :, -1:, :].expand(-1, -1, T, -1)
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=pad_only)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecOwnCausalTriu(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).triu()  # my own mask
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossReadsDecoder(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # second attention over the decoder's own states
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossNoMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecMasksInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        tgt_block, src_block = ~tgt_mask, ~src_mask  # True = blocked, like nn.Transformer
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_block)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_block)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
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


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        h, m = self.norm2(x), self.norm2(memory)  # pre-norm: normalize what goes in, memory too
        x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        x = self.norm1(x)
        x = x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0])
        x = self.norm2(x)
        x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        x = self.norm3(x)
        return x + self.dropout(self.feed_forward(x))


class DecNormFirstIgnored(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecNorm2Norm3Swapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3
        )
        return self._add_norm(x, self.feed_forward, self.norm2)


class DecAttentionModulesSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # the first attention (over the target) with cross_attn's weights, and the reverse
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecWrittenOut(_Base):
    """Both modes written out, no helper, keyword arguments to the attention calls."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(query=h, key=h, value=h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(
                self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)[0]
            )
            h = self.norm3(x)
            return x + self.dropout(self.feed_forward(h))
        sa, _ = self.self_attn(x, x, x, mask=tgt_mask)
        x = self.norm1(x + self.dropout(sa))
        ca, _ = self.cross_attn(x, memory, memory, mask=src_mask)
        x = self.norm2(x + self.dropout(ca))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecRedundantCausal(_Base):
    """ANDs its own causal mask into tgt_mask (already causal: no change), uses fused
    attention, and takes an extra optional argument."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor,
        src_mask: Tensor,
        return_cross_weights: bool = False,
    ) -> Tensor:
        T = x.shape[1]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        self_mask = tgt_mask & causal
        x = self._add_norm(
            x, lambda h: self.self_attn(h, h, h, mask=self_mask, fused=True)[0], self.norm1
        )
        x = self._add_norm(
            x,
            lambda h: self.cross_attn(h, memory, memory, mask=src_mask, fused=True)[0],
            self.norm2,
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecSublayerList(nn.Module):
    """The three sub-layers in a loop over (function, norm) pairs; layers built in another
    order, dropout under another name."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.residual_dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            if self.norm_first:
                x = x + self.residual_dropout(fn(norm(x)))
            else:
                x = norm(x + self.residual_dropout(fn(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_causal_mask",
        DecNoCausal,
        "mistake",
        "For self-attention I kept only the target padding (the last row of tgt_mask for every "
        "query), so each position sees the tokens after it.",
    ),
    BlindCase(
        CHECK,
        "own_causal_triu",
        DecOwnCausalTriu,
        "mistake",
        "I built my own causal mask with triu() instead of tril(), and used it instead of "
        "tgt_mask: every position sees itself and the future, and padding is not masked.",
    ),
    BlindCase(
        CHECK,
        "cross_attends_to_decoder",
        DecCrossReadsDecoder,
        "mistake",
        "My second attention took keys and values from the decoder (h, h, h) instead of the "
        "memory, so the source never reaches the output.",
    ),
    BlindCase(
        CHECK,
        "cross_without_src_mask",
        DecCrossNoMask,
        "mistake",
        "I left the mask out of the cross-attention, so the decoder attends to source padding.",
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
        "cross_before_self",
        DecCrossFirst,
        "mistake",
        "I put cross-attention first and masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I forgot the residual connection around cross-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_memory",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I passed the memory through norm2 as well before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        DecPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I overwrote x with norm(x) before each sub-layer, so the residual adds to "
        "the normalized stream.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        DecNormFirstIgnored,
        "mistake",
        "I implemented post-norm only; norm_first is stored but never used.",
    ),
    BlindCase(
        CHECK,
        "norm2_norm3_swapped",
        DecNorm2Norm3Swapped,
        "mistake",
        "I used norm3 after cross-attention and norm2 after the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "attention_modules_swapped",
        DecAttentionModulesSwapped,
        "mistake",
        "I mixed up the two attention modules: cross_attn for the masked self-attention and "
        "self_attn for the attention to the memory.",
    ),
    BlindCase(
        CHECK,
        "written_out",
        DecWrittenOut,
        "correct",
        "Both modes written out without a helper; keyword arguments for query, key, value.",
    ),
    BlindCase(
        CHECK,
        "redundant_causal_fused",
        DecRedundantCausal,
        "correct",
        "ANDs a tril causal mask into tgt_mask (no change), fused attention, an extra optional "
        "return_cross_weights argument.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop",
        DecSublayerList,
        "correct",
        "Loops over (sub-layer, norm) pairs; layers created in another order; the dropout "
        "module named residual_dropout.",
    ),
]
