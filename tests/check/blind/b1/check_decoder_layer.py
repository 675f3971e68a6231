"""Blind cases for check_decoder_layer (chapter 13)."""

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

    def block(self, x, fn, norm):
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def run(self, x, memory, self_mask, cross_mask, kv_from_memory=True):
        x = self.block(x, lambda h: self.self_attn(h, h, h, mask=self_mask)[0], self.norm1)
        x = self.block(
            x,
            lambda h: self.cross_attn(
                h, memory if kv_from_memory else h, memory if kv_from_memory else h, mask=cross_mask
            )[0],
            self.norm2,
        )
        return self.block(x, self.feed_forward, self.norm3)


class DecNoCausal(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.run(x, memory, None, src_mask)  # no mask in the self-attention


class DecCrossOnSelf(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.block(
            x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2
        )  # reads x
        return self.block(x, self.feed_forward, self.norm3)


class DecCrossBeforeSelf(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self.block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.block(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.run(x, memory, src_mask, None)


class DecSrcMaskUnused(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.run(x, memory, tgt_mask, None)  # the source padding is visible


class DecPreNormMemoryNormalized(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        if not self.norm_first:
            return self.run(x, memory, tgt_mask, src_mask)
        x = x + self.dropout(
            self.self_attn(self.norm1(x), self.norm1(x), self.norm1(x), mask=tgt_mask)[0]
        )
        h, m = self.norm2(x), self.norm2(memory)  # the memory is normalized too
        x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecNoFFNResidual(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        if self.norm_first:
            return self.dropout(self.feed_forward(self.norm3(x)))
        return self.norm3(self.dropout(self.feed_forward(x)))  # residual forgotten


class DecTgtMaskInverted(_Base):
    def forward(self, x, memory, tgt_mask, src_mask):
        return self.run(x, memory, ~tgt_mask, ~src_mask)  # True read as blocked


class DecArgsOrder(_Base):
    def forward(self, x, memory, src_mask, tgt_mask):  # masks in the other order
        return self.run(x, memory, tgt_mask, src_mask)


class DecOptionalMasks(_Base):
    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        sublayers = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in sublayers:
            x = x + self.dropout(fn(norm(x))) if self.norm_first else norm(x + self.dropout(fn(x)))
        return x


class DecExplicitBranches(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop1, self.drop2, self.drop3 = (nn.Dropout(dropout) for _ in range(3))
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask, src_mask):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop1(self.self_attn(h, h, h, mask=tgt_mask, need_weights=True)[0])
            h = self.norm2(x)
            x = x + self.drop2(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            x = x + self.drop3(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.drop1(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.drop2(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            x = self.norm3(x + self.drop3(self.feed_forward(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecNoCausal,
        "mistake",
        "passes no mask to the self-attention, so the decoder sees the future",
    ),
    BlindCase(
        CHECK,
        "cross_attention_reads_x",
        DecCrossOnSelf,
        "mistake",
        "passes x instead of memory as keys and values of the cross-attention",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "runs the cross-attention before the masked self-attention",
    ),
    BlindCase(
        CHECK,
        "src_mask_in_self_attention",
        DecMasksSwapped,
        "mistake",
        "gives the self-attention the source padding mask and the cross-attention no mask",
    ),
    BlindCase(
        CHECK,
        "src_mask_unused",
        DecSrcMaskUnused,
        "mistake",
        "never passes src_mask to the cross-attention, so source padding is attended",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_memory",
        DecPreNormMemoryNormalized,
        "mistake",
        "in pre-norm, also passes the memory through norm2 before the cross-attention",
    ),
    BlindCase(
        CHECK,
        "no_residual_around_ffn",
        DecNoFFNResidual,
        "mistake",
        "forgets the residual connection around the feed-forward network",
    ),
    BlindCase(
        CHECK,
        "masks_inverted",
        DecTgtMaskInverted,
        "mistake",
        "passes ~tgt_mask and ~src_mask, reading True as blocked",
    ),
    BlindCase(
        CHECK,
        "slip_masks_in_other_order",
        DecArgsOrder,
        "mistake",
        "writes forward(x, memory, src_mask, tgt_mask), the two masks in the other order",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        DecOptionalMasks,
        "correct",
        "loops over (sublayer, norm) pairs and makes both masks optional",
    ),
    BlindCase(
        CHECK,
        "explicit_branches_three_dropouts",
        DecExplicitBranches,
        "correct",
        "writes the pre- and post-norm paths out separately with one dropout module per sub-layer",
    ),
]
