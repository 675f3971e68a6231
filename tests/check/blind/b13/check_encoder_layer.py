"""Blind set B13, check_encoder_layer (chapter 13): encoder blocks as readers write them."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _sa(self, h: Tensor, mask: Tensor) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFfnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncNormBeforeAdd(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # post-norm: normalize the sub-layer's output, then add the residual
        x = x + self.norm1(self.dropout(self._sa(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._sa(h, src_mask))
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, to be hidden
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._sa(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._sa(x, src_mask)))


class EncPreNormKeysUnnormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])  # only queries normed
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormExtraFinalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # the block's output should be normalized too
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncHelperMethod(_Base):
    """A residual helper method and an extra unused argument with a default."""

    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor, return_attn: bool = False) -> Tensor:
        x = self._add_norm(x, lambda h: self._sa(h, src_mask), self.norm1)
        return self._add_norm(x, self.feed_forward, self.norm2)


class EncExpandedMask(_Base):
    """The padding mask expanded to a full (B, 1, S, S) matrix before attention."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        mask = src_mask.expand(-1, -1, S, -1)
        if self.norm_first:
            y = self.norm1(x)
            x = x + self.dropout(self.self_attn(y, y, y, mask=mask)[0])
            y = self.norm2(x)
            x = x + self.dropout(self.feed_forward(y))
        else:
            attn, _ = self.self_attn(x, x, x, mask=mask)
            x = self.norm1(x + self.dropout(attn))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncOwnInit(nn.Module):
    """Its own __init__ with sub-layers in a different creation order and two dropouts."""

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
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.drop1, self.drop2 = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(self.drop1(self.self_attn(x, x, x, mask=src_mask)[0]) + x)
            return self.norm2(self.drop2(self.feed_forward(x)) + x)
        normed = self.norm1(x)
        x = self.drop1(self.self_attn(normed, normed, normed, mask=src_mask)[0]) + x
        return self.drop2(self.feed_forward(self.norm2(x))) + x


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot to add x back after the self-attention sub-layer.",
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
        "post_norm_on_sublayer_only",
        EncNormBeforeAdd,
        "mistake",
        "In post-norm I normalized the sub-layer's output and then added x: x + norm(f(x)).",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        EncIgnoresNormFirst,
        "mistake",
        "I stored norm_first but always ran the post-norm block.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I added the normalized x as the residual instead of x itself.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I inverted the mask, thinking True meant padding as in PyTorch.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I did not pass src_mask to the attention, so padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward sub-layer before the self-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_unnormed",
        EncPreNormKeysUnnormed,
        "mistake",
        "In pre-norm I normalized only the queries; keys and values were the raw x.",
    ),
    BlindCase(
        CHECK,
        "prenorm_extra_final_norm",
        EncPreNormExtraFinalNorm,
        "mistake",
        "In pre-norm I also applied norm2 to the block's output at the end.",
    ),
    BlindCase(
        CHECK,
        "helper_method",
        EncHelperMethod,
        "correct",
        "A residual helper method, and an extra optional argument in forward.",
    ),
    BlindCase(
        CHECK,
        "expanded_mask",
        EncExpandedMask,
        "correct",
        "I expanded the padding mask to (B, 1, S, S) before attention.",
    ),
    BlindCase(
        CHECK,
        "own_init_two_dropouts",
        EncOwnInit,
        "correct",
        "Layers created in another order, one dropout per sub-layer, addition order swapped.",
    ),
]
