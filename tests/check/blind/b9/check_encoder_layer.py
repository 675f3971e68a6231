"""Blind set B9, check_encoder_layer (chapter 13): encoder blocks as readers write them."""

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


class EncNormOnSublayerOutput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._sa(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self._sa(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFfnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # nn.MultiheadAttention wants True where it must not look
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskNotPassed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return x + self.dropout(self._sa(self.norm1(x), src_mask))
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return self.norm1(x + self.dropout(self._sa(x, src_mask)))


class EncNormFirstIgnored(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormKeysUnnormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskSqueezed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.squeeze(1)  # (B, 1, S): "one dimension of 1 is enough"
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnResidualFromInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(h)))
        h = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(h)))


class EncOneNormTwice(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncWithHelper(_Base):
    def _sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sublayer(x, lambda h: self._sa(h, src_mask), self.norm1)
        return self._sublayer(x, self.feed_forward, self.norm2)


class EncTwoDropouts(nn.Module):
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

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            attn_out, _ = self.self_attn(h, h, h, src_mask)
            x = x + self.dropout1(attn_out)
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            attn_out, _ = self.self_attn(x, x, x, src_mask)
            x = self.norm1(x + self.dropout1(attn_out))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x


class EncOptionalMask(_Base):
    def forward(self, x: Tensor, src_mask: Tensor | None = None, return_weights: bool = False):
        h = self.norm1(x) if self.norm_first else x
        attn_out, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=return_weights)
        x = x + self.dropout(attn_out)
        if not self.norm_first:
            x = self.norm1(x)
        h = self.norm2(x) if self.norm_first else x
        x = x + self.dropout(self.feed_forward(h))
        if not self.norm_first:
            x = self.norm2(x)
        return (x, weights) if return_weights else x


CASES = [
    BlindCase(
        CHECK,
        "norm_on_sublayer_output",
        EncNormOnSublayerOutput,
        "mistake",
        "post-norm written as x + norm(sublayer(x)): I normalized the sub-layer's output before "
        "adding it, so the residual stream itself is never normalized",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "pre-norm: I wrote x = norm1(x) and then x = x + attn(x), so the residual adds the "
        "normalized x instead of the raw input",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "I forgot the residual connection around the feed-forward network (both modes)",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask to the attention, thinking True means 'blocked' as in "
        "nn.MultiheadAttention",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskNotPassed,
        "mistake",
        "I called self_attn(x, x, x) without the mask, so padding tokens are attended to",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I applied the feed-forward sub-layer first and the self-attention second",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncNormFirstIgnored,
        "mistake",
        "I stored norm_first but always compute post-norm, so the pre-norm block is wrong",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_unnormed",
        EncPreNormKeysUnnormed,
        "mistake",
        "pre-norm: only the queries are normalized, the keys and values come from the raw x "
        "(self_attn(norm1(x), x, x))",
    ),
    BlindCase(
        CHECK,
        "mask_squeezed",
        EncMaskSqueezed,
        "mistake",
        "I squeezed the mask to (B, 1, S), which then broadcasts over the heads axis instead of "
        "the batch axis",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_input",
        EncFfnResidualFromInput,
        "mistake",
        "the second residual adds the block's input x instead of the output of the attention "
        "sub-layer",
    ),
    BlindCase(
        CHECK,
        "one_norm_twice",
        EncOneNormTwice,
        "mistake",
        "I used norm1 for both sub-layers; norm2 exists but is never used (it gets no gradient)",
    ),
    BlindCase(
        CHECK,
        "helper_method",
        EncWithHelper,
        "correct",
        "a small _sublayer helper that does pre- or post-norm with a lambda for the attention",
    ),
    BlindCase(
        CHECK,
        "two_dropouts",
        EncTwoDropouts,
        "correct",
        "a separate dropout module per sub-layer, mask passed positionally, explicit if/else",
    ),
    BlindCase(
        CHECK,
        "optional_mask_and_weights",
        EncOptionalMask,
        "correct",
        "the mask is optional and an extra return_weights flag (default False) can return the "
        "attention weights",
    ),
]
