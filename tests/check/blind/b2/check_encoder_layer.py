"""Blind cases for check_encoder_layer (chapter 13), written from the chapter's text only."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def sa(self, h: Tensor, mask) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---- mistakes -------------------------------------------------------------------------------


class NoResidualAroundAttention(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = self.dropout(self.sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class NormFirstIgnored(_Base):
    def forward(self, x, src_mask):
        x = self.norm1(x + self.dropout(self.sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class NormOnSublayerOnly(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self.sa(x, src_mask)))  # norm(sublayer) then add
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class FeedForwardFirst(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self.sa(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self.sa(x, src_mask)))


class MaskInverted(_Base):
    def forward(self, x, src_mask):
        mask = ~src_mask  # True = padding, as in nn.MultiheadAttention
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class MaskNotUsed(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.sa(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class OneNormTwice(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm1(x + self.dropout(self.sa(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class PreNormResidualNormalized(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = self.norm1(x)  # normalized the stream itself, then added to it
            x = x + self.dropout(self.sa(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self.sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class AttentionTupleAdded(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask))  # forgot it returns a pair
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---- reader's slip ------------------------------------------------------------------------------


class NoDropoutOrNormFirstArguments(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x, src_mask):
        x = self.norm1(x + self.self_attn(x, x, x, mask=src_mask)[0])
        return self.norm2(x + self.feed_forward(x))


# ---- correct variants ---------------------------------------------------------------------------


class ExplicitBranches(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.sa(h, src_mask))
            h = self.norm2(x)
            x = x + self.dropout(self.feed_forward(h))
        else:
            x = self.norm1(x + self.dropout(self.sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class SublayerLoopTwoDropouts(nn.Module):
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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor | None = None, weights=None) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1, self.dropout1),
            (self.feed_forward, self.norm2, self.dropout2),
        ]
        for sublayer, norm, drop in steps:
            x = x + drop(sublayer(norm(x))) if self.norm_first else norm(x + drop(sublayer(x)))
        return x


class FusedAttentionPath(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def attn(h):
            return self.self_attn(h, h, h, mask=src_mask, fused=True)[0]

        if self.norm_first:
            x = x + self.dropout(attn(self.norm1(x)))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(attn(x)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


CASES = [
    BlindCase(
        CHECK,
        "no_residual_around_attention",
        NoResidualAroundAttention,
        "mistake",
        "I forgot to add x back around the self-attention sub-layer",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        NormFirstIgnored,
        "mistake",
        "I stored norm_first but always computed post-norm",
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer_only",
        NormOnSublayerOnly,
        "mistake",
        "in post-norm I normalized the sub-layer's output and then added x, x + norm(sublayer(x))",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        FeedForwardFirst,
        "mistake",
        "I applied the feed-forward sub-layer before the self-attention",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        MaskInverted,
        "mistake",
        "I passed ~src_mask to the attention, as nn.MultiheadAttention wants True on padding",
    ),
    BlindCase(
        CHECK,
        "mask_not_used",
        MaskNotUsed,
        "mistake",
        "I called the self-attention without the mask",
    ),
    BlindCase(
        CHECK,
        "one_norm_twice",
        OneNormTwice,
        "mistake",
        "I used norm1 for both sub-layers and never used norm2",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_normalized",
        PreNormResidualNormalized,
        "mistake",
        "in pre-norm I replaced x by norm(x) before adding the sub-layer, so the residual stream is normalized",
    ),
    BlindCase(
        CHECK,
        "attention_tuple_added",
        AttentionTupleAdded,
        "mistake",
        "I added the attention's return value to x, forgetting that it returns a pair (out, weights)",
    ),
    BlindCase(
        CHECK,
        "no_dropout_or_norm_first_arguments",
        NoDropoutOrNormFirstArguments,
        "mistake",
        "my constructor only takes (d_model, num_heads, d_ff), without dropout and norm_first",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        ExplicitBranches,
        "correct",
        "I wrote the pre-norm and post-norm branches out with if/else",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop_two_dropouts",
        SublayerLoopTwoDropouts,
        "correct",
        "I looped over (sublayer, norm, dropout) triples with two dropout modules and an extra optional argument",
    ),
    BlindCase(
        CHECK,
        "fused_attention_path",
        FusedAttentionPath,
        "correct",
        "I called the attention with fused=True (scaled_dot_product_attention)",
    ),
]
