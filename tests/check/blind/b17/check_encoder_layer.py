"""Blind set B17, check_encoder_layer (chapter 13): one encoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _sa(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._sa(x, src_mask)))  # forgot "x +"
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFfnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._sa(h, src_mask))  # residual from the normalized x
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))  # always post-norm
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormOnSublayerOutput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._sa(x, src_mask)))  # x + Norm(Sublayer(x))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._sa(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._sa(x, src_mask)))


class EncNormsSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self._sa(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # as nn.MultiheadAttention wants it: True = padding
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormQueryOnly(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            # normalized queries, but keys and values from the raw residual stream
            x = x + self.dropout(self.self_attn(self.norm1(x), x, x, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormFinalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # so that the block's output is normalized, as in post-norm
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncWeightsReturned(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            attn, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
            x = x + self.dropout(attn)
            return x + self.dropout(self.feed_forward(self.norm2(x))), weights
        attn, weights = self.self_attn(x, x, x, mask=src_mask, need_weights=True)
        x = self.norm1(x + self.dropout(attn))
        return self.norm2(x + self.dropout(self.feed_forward(x))), weights


# ---------------------------------------------------------------- correct variants


class EncTwoBranches(_Base):
    """if/else written out once per mode, no helper."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            attn_out, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self.norm1(x + self.dropout(attn_out))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
            return x
        h = self.norm1(x)
        attn_out, _ = self.self_attn(query=h, key=h, value=h, mask=src_mask)
        x = x + self.dropout(attn_out)
        h = self.norm2(x)
        x = x + self.dropout(self.feed_forward(h))
        return x


class EncSublayerHelper(nn.Module):
    """A generic ``_sublayer`` helper, the layers made in another order, extra attributes, and
    the fused attention path; ``src_mask`` optional."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first
        self.d_model = d_model

    def _sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.drop(fn(norm(x)))
        return norm(x + self.drop(fn(x)))

    def _attend(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask, fused=True)[0]

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        x = self._sublayer(x, lambda h: self._attend(h, src_mask), self.norm1)
        return self._sublayer(x, self.feed_forward, self.norm2)


class EncExplicitMaskBroadcast(_Base):
    """Expands the mask to (B, H, S, S) itself and keeps the weights on the module for plots."""

    def forward(self, x: Tensor, src_mask: Tensor, keep_weights: bool = False) -> Tensor:
        B, S, _ = x.shape
        mask = src_mask.expand(B, self.self_attn.num_heads, S, S)
        h = self.norm1(x) if self.norm_first else x
        out, w = self.self_attn(h, h, h, mask, keep_weights)
        if keep_weights:
            self.last_weights = w
        x = x + self.dropout(out)
        if not self.norm_first:
            x = self.norm1(x)
        h = self.norm2(x) if self.norm_first else x
        x = x + self.dropout(self.feed_forward(h))
        return x if self.norm_first else self.norm2(x)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual connection around self-attention: norm1(dropout(attn(x))), and "
        "in pre-norm the attention output replaces x.",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "I forgot to add x back around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I normalized x first and then added the sub-layer output to the "
        "normalized x, not to the raw residual stream.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncIgnoresNormFirst,
        "mistake",
        "I wrote post-norm only and never looked at norm_first.",
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer_output",
        EncNormOnSublayerOutput,
        "mistake",
        "Post-norm as x + LayerNorm(sublayer(x)): I normalized the sub-layer's output before "
        "adding it, instead of normalizing the sum.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward network first and self-attention second.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        EncNormsSwapped,
        "mistake",
        "I used norm2 around self-attention and norm1 around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True must mark padding as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I called self_attn(x, x, x) without the mask, so padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_unnormalized",
        EncPreNormQueryOnly,
        "mistake",
        "In pre-norm I normalized only the query: self_attn(norm1(x), x, x).",
    ),
    BlindCase(
        CHECK,
        "prenorm_extra_final_norm",
        EncPreNormFinalNorm,
        "mistake",
        "In pre-norm I applied norm2 once more to the block's output so that it comes out "
        "normalized.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_too",
        EncWeightsReturned,
        "mistake",
        "I return (x, attention weights) instead of x alone.",
    ),
    BlindCase(
        CHECK,
        "two_branches",
        EncTwoBranches,
        "correct",
        "The two modes written out as separate branches, keyword arguments to self_attn.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper_fused",
        EncSublayerHelper,
        "correct",
        "A _sublayer helper, layers created in another order, dropout named drop, the fused "
        "attention path, src_mask optional.",
    ),
    BlindCase(
        CHECK,
        "expanded_mask_keep_weights",
        EncExplicitMaskBroadcast,
        "correct",
        "The mask expanded to (B, H, S, S) by hand; an extra keep_weights argument (default "
        "False) stores the weights.",
    ),
]
