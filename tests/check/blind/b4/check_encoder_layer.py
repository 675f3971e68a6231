"""Blind cases for check_encoder_layer (chapter 13), written from the chapter's text only."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The layers every case builds, with the book's names."""

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

    def attn(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


class NoResidualAroundAttention(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self.attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class PreNormResidualFromNormalized(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self.attn(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class MaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # I thought True marked the padding to hide
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class MaskNotPassed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class FeedForwardFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self.attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self.attn(x, src_mask)))


class AlwaysPostNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class NormsSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self.attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class PreNormQueryUnnormalized(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(x, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class PreNormAlsoNormsAfter(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x + self.dropout(self.attn(self.norm1(x), src_mask)))
            return self.norm2(x + self.dropout(self.feed_forward(self.norm2(x))))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class SublayerHelper(_Base):
    """Correct: one helper for Add & Norm, two dropout modules, an optional extra argument."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)

    def _add_norm(self, x, sublayer, norm, drop):
        if self.norm_first:
            return x + drop(sublayer(norm(x)))
        return norm(x + drop(sublayer(x)))

    def forward(self, x: Tensor, src_mask: Tensor, return_input: bool = False) -> Tensor:
        x = self._add_norm(x, lambda h: self.attn(h, src_mask), self.norm1, self.drop1)
        x = self._add_norm(x, self.feed_forward, self.norm2, self.drop2)
        return x


class ExpandedMaskExplicitSteps(_Base):
    """Correct: the mask expanded to (B, 1, S, S) and every step on its own line."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        mask = src_mask.expand(-1, -1, S, -1)  # (B, 1, S, S)
        if self.norm_first:
            h = self.norm1(x)
            a, _ = self.self_attn(h, h, h, mask=mask)
            x = x + self.dropout(a)
            h = self.norm2(x)
            f = self.feed_forward(h)
            x = x + self.dropout(f)
            return x
        a, _ = self.self_attn(x, x, x, mask=mask)
        x = x + self.dropout(a)
        x = self.norm1(x)
        f = self.feed_forward(x)
        x = x + self.dropout(f)
        x = self.norm2(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_residual_around_attention",
        NoResidualAroundAttention,
        "mistake",
        "I normalized the attention output alone and forgot to add x back around the "
        "self-attention (in both modes)",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normalized",
        PreNormResidualFromNormalized,
        "mistake",
        "in pre-norm I overwrote x with norm1(x) and added the sub-layer to that, so the "
        "residual stream itself gets normalized",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        MaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True marks the padding to hide",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        MaskNotPassed,
        "mistake",
        "I called self_attn(h, h, h) without the mask, so padding is attended to",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        FeedForwardFirst,
        "mistake",
        "I ran the feed-forward network before the self-attention",
    ),
    BlindCase(
        CHECK,
        "always_post_norm",
        AlwaysPostNorm,
        "mistake",
        "I stored norm_first but always computed post-norm",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        NormsSwapped,
        "mistake",
        "I used norm2 around the attention and norm1 around the feed-forward network",
    ),
    BlindCase(
        CHECK,
        "prenorm_query_unnormalized",
        PreNormQueryUnnormalized,
        "mistake",
        "in pre-norm I normalized keys and values but passed the raw x as the query",
    ),
    BlindCase(
        CHECK,
        "prenorm_also_norms_after",
        PreNormAlsoNormsAfter,
        "mistake",
        "for pre-norm I normalized before the sub-layer and again after the residual add",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        SublayerHelper,
        "correct",
        "an Add & Norm helper, one dropout module per sub-layer, an unused optional argument",
    ),
    BlindCase(
        CHECK,
        "expanded_mask_explicit_steps",
        ExpandedMaskExplicitSteps,
        "correct",
        "the padding mask expanded to (B, 1, S, S), each step written out on its own line",
    ),
]
