"""Blind cases for check_decoder_layer (chapter 13), written from the chapter's text only."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
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

    def block(self, x, f_self, f_cross):
        """Run the three sub-layers with the right residual/norm, given the two attention calls."""
        d = self.dropout
        if self.norm_first:
            x = x + d(f_self(self.norm1(x)))
            x = x + d(f_cross(self.norm2(x)))
            return x + d(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + d(f_self(x)))
        x = self.norm2(x + d(f_cross(x)))
        return self.norm3(x + d(self.feed_forward(x)))


# ---- mistakes -------------------------------------------------------------------------------


class CrossAttentionReadsTarget(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.block(
            x,
            lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0],
            lambda h: self.cross_attn(h, h, h, mask=None)[0],  # keys/values from the target
        )


class SelfAttentionWithoutMask(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.block(
            x,
            lambda h: self.self_attn(h, h, h)[0],
            lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0],
        )


class CrossAttentionWithoutPaddingMask(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.block(
            x,
            lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0],
            lambda h: self.cross_attn(h, memory, memory)[0],
        )


class CrossBeforeSelf(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.block(
            x,
            lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0],
            lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0],
        )


class NoResidualAroundCross(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        d = self.dropout
        if self.norm_first:
            x = x + d(self.self_attn(*[self.norm1(x)] * 3, mask=tgt_mask)[0])
            x = d(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
            return x + d(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + d(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(d(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + d(self.feed_forward(x)))


class NormFirstIgnored(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.norm1(x + self.self_attn(x, x, x, mask=tgt_mask)[0])
        x = self.norm2(x + self.cross_attn(x, memory, memory, mask=src_mask)[0])
        return self.norm3(x + self.feed_forward(x))


class MemoryNormalizedToo(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        if self.norm_first:
            m = self.norm2(memory)  # I normalized the memory with the same norm as the queries
            return self.block(
                x,
                lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0],
                lambda h: self.cross_attn(h, m, m, mask=src_mask)[0],
            )
        return self.block(
            x,
            lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0],
            lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0],
        )


class TargetMaskInverted(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.block(
            x,
            lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0],
            lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0],
        )


class CrossUsesSelfAttentionLayer(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.block(
            x,
            lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0],
            lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0],  # copy-paste
        )


class CrossAttentionFromBlockInput(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x0 = x
        d = self.dropout
        if self.norm_first:
            x = x + d(self.self_attn(*[self.norm1(x)] * 3, mask=tgt_mask)[0])
            x = x + d(self.cross_attn(self.norm2(x0), memory, memory, mask=src_mask)[0])
            return x + d(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + d(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + d(self.cross_attn(x0, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + d(self.feed_forward(x)))


# ---- reader's slip ------------------------------------------------------------------------------


class MasksInOtherOrder(_Base):
    def forward(self, x, memory, src_mask, tgt_mask):  # the masks in the other order
        return self.block(
            x,
            lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0],
            lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0],
        )


# ---- correct variants ---------------------------------------------------------------------------


class ExplicitSteps(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            h = self.norm3(x)
            x = x + self.dropout(self.feed_forward(h))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            x = self.norm3(x + self.dropout(self.feed_forward(x)))
        return x


class ProjectKvThenAttend(_Base):
    def forward(self, x, memory, tgt_mask=None, src_mask=None, cache=None):
        def self_part(h):
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_part(h):
            k, v = self.cross_attn.project_kv(memory, memory)
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        return self.block(x, self_part, cross_part)


class ResidualHelper(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _residual(self, x, f, norm):
        return x + self.drop(f(norm(x))) if self.norm_first else norm(x + self.drop(f(x)))

    def forward(self, x, memory, tgt_mask, src_mask):
        x = self._residual(
            x, lambda h: self.self_attn(h, h, h, tgt_mask, fused=True)[0], self.norm1
        )
        x = self._residual(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2)
        return self._residual(x, self.feed_forward, self.norm3)


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_target",
        CrossAttentionReadsTarget,
        "mistake",
        "in the cross-attention I passed h as keys and values instead of the memory",
    ),
    BlindCase(
        CHECK,
        "self_attention_without_mask",
        SelfAttentionWithoutMask,
        "mistake",
        "I called the masked self-attention without tgt_mask, so it sees the future",
    ),
    BlindCase(
        CHECK,
        "cross_attention_without_padding_mask",
        CrossAttentionWithoutPaddingMask,
        "mistake",
        "I called the cross-attention without src_mask, so it attends to source padding",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        CrossBeforeSelf,
        "mistake",
        "I ran the cross-attention first and the masked self-attention second",
    ),
    BlindCase(
        CHECK,
        "no_residual_around_cross",
        NoResidualAroundCross,
        "mistake",
        "I forgot to add x back around the cross-attention sub-layer",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        NormFirstIgnored,
        "mistake",
        "I always computed post-norm whatever norm_first says",
    ),
    BlindCase(
        CHECK,
        "memory_normalized_too",
        MemoryNormalizedToo,
        "mistake",
        "in pre-norm I also passed the memory through norm2 before the cross-attention",
    ),
    BlindCase(
        CHECK,
        "target_mask_inverted",
        TargetMaskInverted,
        "mistake",
        "I passed ~tgt_mask to the self-attention, reading True as blocked",
    ),
    BlindCase(
        CHECK,
        "cross_uses_self_attention_layer",
        CrossUsesSelfAttentionLayer,
        "mistake",
        "I called self.self_attn for the cross-attention too, so cross_attn's weights are never used",
    ),
    BlindCase(
        CHECK,
        "cross_attention_from_block_input",
        CrossAttentionFromBlockInput,
        "mistake",
        "I took the cross-attention's queries from the block's input instead of the self-attention sub-layer's output",
    ),
    BlindCase(
        CHECK,
        "masks_in_other_order",
        MasksInOtherOrder,
        "mistake",
        "I wrote forward(x, memory, src_mask, tgt_mask), the two masks in the other order",
    ),
    BlindCase(
        CHECK,
        "explicit_steps",
        ExplicitSteps,
        "correct",
        "I wrote the three sub-layers out one by one for both norm placements",
    ),
    BlindCase(
        CHECK,
        "project_kv_then_attend",
        ProjectKvThenAttend,
        "correct",
        "I used project_kv and attend of MultiHeadAttention and added an optional cache argument",
    ),
    BlindCase(
        CHECK,
        "residual_helper",
        ResidualHelper,
        "correct",
        "I wrote a residual helper method, passed the masks positionally and used the fused path for self-attention",
    ),
]
