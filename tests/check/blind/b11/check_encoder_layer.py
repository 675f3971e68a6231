"""Blind set B11, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The layers every version below has, with the book's names."""

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
        out, _ = self.self_attn(h, h, h, mask=mask)
        return out


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self.attn(self.norm1(x), src_mask))  # forgot "x +"
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(self.dropout(self.attn(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncNoFfnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            x = self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
            x = self.norm2(self.dropout(self.feed_forward(x)))
        return x


class EncPostNormOnSublayer(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:  # "Add & Norm": I normalised the sub-layer's output, then added
            x = x + self.norm1(self.dropout(self.attn(x, src_mask)))
            x = x + self.norm2(self.dropout(self.feed_forward(x)))
        return x


class EncPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self.attn(h, src_mask))  # residual taken after the norm
            h = self.norm2(x)
            x = h + self.dropout(self.feed_forward(h))
        else:
            x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            x = x + self.dropout(self.attn(self.norm2(x), src_mask))
        else:
            x = self.norm1(x + self.dropout(self.feed_forward(x)))
            x = self.norm2(x + self.dropout(self.attn(x, src_mask)))
        return x


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # True = padding, as nn.Transformer wants it
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), blocked))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.attn(x, blocked)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncMaskIgnored(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # an encoder sees the whole sentence, so no mask is needed
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), None))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.attn(x, None)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncMaskOnQueries(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): "one row per position"
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.attn(x, mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncNormsSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm2(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
        else:
            x = self.norm2(x + self.dropout(self.attn(x, src_mask)))
            x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return x


class EncAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # norm_first is stored but never read
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnResidualFromInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self.attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(h)))  # adds the block's input
        h = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(h)))


class EncPreNormFinalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # pre-norm "needs a final LayerNorm"
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncHelperMethod(_Base):
    """One helper for both sub-layers, like the book's ``residual`` but as a method."""

    def _add_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        return self._add_norm(x, self.feed_forward, self.norm2)


class EncKeywordsExpandedMask(nn.Module):
    """Layers built in another order, the mask expanded to (B, 1, S, S), keyword calls and an
    extra optional argument ``return_weights``."""

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
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor, return_weights: bool = False):
        S = x.shape[1]
        mask = src_mask.expand(-1, -1, S, -1)  # (B, 1, S, S): same keys for every query
        h = self.norm1(x) if self.norm_first else x
        out, weights = self.self_attn(
            query=h, key=h, value=h, mask=mask, need_weights=return_weights
        )
        x = x + self.drop1(out)
        if not self.norm_first:
            x = self.norm1(x)
        h = self.norm2(x) if self.norm_first else x
        x = x + self.drop2(self.feed_forward(h))
        if not self.norm_first:
            x = self.norm2(x)
        return (x, weights) if return_weights else x


class EncTwoBranches(_Base):
    """Pre-norm and post-norm written out as two separate methods."""

    def _pre(self, x: Tensor, mask: Tensor) -> Tensor:
        y = self.norm1(x)
        x = x + self.dropout(self.self_attn(y, y, y, mask)[0])
        return x + self.dropout(self.feed_forward(self.norm2(x)))

    def _post(self, x: Tensor, mask: Tensor) -> Tensor:
        a, _ = self.self_attn(x, x, x, mask)
        x = self.norm1(self.dropout(a) + x)
        return self.norm2(self.dropout(self.feed_forward(x)) + x)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        return self._pre(x, src_mask) if self.norm_first else self._post(x, src_mask)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual connection around self-attention (x is replaced, not added to).",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "I forgot the residual connection around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "postnorm_on_sublayer_output",
        EncPostNormOnSublayer,
        "mistake",
        "In post-norm I normalised the sub-layer's output and then added x: x + norm(sublayer(x)) "
        "instead of norm(x + sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I added the sub-layer's output to norm(x) instead of to x, so the residual "
        "stream is normalised at every sub-layer.",
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
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True marks the padding as in nn.Transformer.",
    ),
    BlindCase(
        CHECK,
        "mask_ignored",
        EncMaskIgnored,
        "mistake",
        "I called self-attention without the mask, since an encoder may see the whole sentence; "
        "so the padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the padding mask to (B, 1, S, 1), so it hides rows (queries) instead of "
        "key columns.",
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
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but always compute post-norm.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_block_input",
        EncFfnResidualFromInput,
        "mistake",
        "The second residual adds the block's input x instead of the output of the attention "
        "sub-layer.",
    ),
    BlindCase(
        CHECK,
        "prenorm_extra_final_norm",
        EncPreNormFinalNorm,
        "mistake",
        "In pre-norm I apply norm2 once more at the end of the block, because the chapter says "
        "pre-norm needs a final LayerNorm (that one belongs to the stack).",
    ),
    BlindCase(
        CHECK,
        "helper_method",
        EncHelperMethod,
        "correct",
        "One helper method _add_norm does both sub-layers, pre- or post-norm.",
    ),
    BlindCase(
        CHECK,
        "keywords_expanded_mask",
        EncKeywordsExpandedMask,
        "correct",
        "Layers defined in another order, two dropout modules, keyword arguments, the mask "
        "expanded to (B, 1, S, S), and an optional return_weights argument.",
    ),
    BlindCase(
        CHECK,
        "two_branches",
        EncTwoBranches,
        "correct",
        "Pre-norm and post-norm as two methods, the residual added on the other side.",
    ),
]
