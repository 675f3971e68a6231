"""Blind set B19, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The book's layers under the book's names; each case writes its own forward."""

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

    def _attn(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncAlwaysPreNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = x + self.dropout(self._attn(self.norm1(x), src_mask))  # norm_first not looked at
        return x + self.dropout(self.feed_forward(self.norm2(x)))


class EncNormOnSublayer(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # "Add & Norm": I normalized the sub-layer's output, then added
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, as nn.MultiheadAttention wants
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormAddsNormalized(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._attn(h, src_mask))  # residual from the normalized x
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormsSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self._attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncPreNormRawKeys(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])  # keys from raw x
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnResidualFromInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(a)))  # skip from the block input
        a = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(a)))


class EncPreNormAlsoNormsOutput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # a final norm, to keep the output normalized
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): I thought padding rows are masked
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncSublayerHelper(_Base):
    def sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor, return_weights: bool = False) -> Tensor:
        x = self.sublayer(x, lambda h: self._attn(h, src_mask), self.norm1)
        return self.sublayer(x, self.feed_forward, self.norm2)


class EncSeparateDropouts(nn.Module):
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
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.dropout1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            out, _ = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
            x = x + self.dropout1(out)
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            out, _ = self.self_attn(x, x, x, src_mask)
            x = self.norm1(x + self.dropout1(out))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x


class EncProjectAttend(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        B, S, _ = x.shape
        mask = src_mask.expand(B, 1, S, S)  # the same mask, broadcast out by hand
        h = self.norm1(x) if self.norm_first else x
        k, v = self.self_attn.project_kv(h, h)
        a, _ = self.self_attn.attend(h, k, v, mask=mask)
        x = x + self.dropout(a)
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
        "I forgot to add x back around the self-attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPreNorm,
        "mistake",
        "I always wrote the pre-norm form and never looked at norm_first.",
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer_output",
        EncNormOnSublayer,
        "mistake",
        "I wrote x + norm(sublayer(x)): the LayerNorm on the sub-layer's output, not on the sum.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward network first and the self-attention second.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True marks padding as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I never passed src_mask to the attention, so padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normalized",
        EncPreNormAddsNormalized,
        "mistake",
        "In pre-norm I wrote h = norm(x) and added the sub-layer to h, not to x.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        EncNormsSwapped,
        "mistake",
        "I used norm2 around the attention and norm1 around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "prenorm_unnormalized_keys",
        EncPreNormRawKeys,
        "mistake",
        "In pre-norm I normalized only the queries: self_attn(norm(x), x, x).",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_block_input",
        EncFfnResidualFromInput,
        "mistake",
        "The feed-forward residual adds the block's input x instead of the attention "
        "sub-layer's output.",
    ),
    BlindCase(
        CHECK,
        "prenorm_extra_output_norm",
        EncPreNormAlsoNormsOutput,
        "mistake",
        "In pre-norm I also normalized the block's output with norm2 at the end.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the padding mask to (B, 1, S, 1) so it masks the padded queries "
        "instead of the padded keys.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        EncSublayerHelper,
        "correct",
        "A helper method for Add & Norm and an extra unused keyword with a default.",
    ),
    BlindCase(
        CHECK,
        "separate_dropouts",
        EncSeparateDropouts,
        "correct",
        "Two dropout modules (dropout1, dropout2), modules created in another order, "
        "need_weights=True with the weights thrown away, mask passed positionally.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        EncProjectAttend,
        "correct",
        "MultiHeadAttention's project_kv/attend instead of its forward, and the mask "
        "expanded to (B, 1, S, S) by hand.",
    ),
]
