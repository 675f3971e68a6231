"""Blind set B18, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The book's layers with the book's names; each case writes its own ``forward``."""

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


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFfnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)  # normalize first, then add the sub-layer to it
            x = x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0])
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPostNormOnBranch(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # "Add & Norm": I normalized the sub-layer's output and then added it
        x = x + self.norm1(self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            h = self.norm1(x)
            return x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # nn.MultiheadAttention style: True = padding
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=blocked)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=blocked)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): I thought rows were the tokens
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstReversed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # pre-norm is the default, I thought
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormOnlyQuery(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            # the query is normalized; keys and values come from the residual stream
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormFinalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # pre-norm needs a final LayerNorm
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormsSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm2(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncForgotUnpack(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask))  # forgot the [0]
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncHelperMethods(_Base):
    """PyTorch's layout: one method per sub-layer."""

    def _sa_block(self, x: Tensor, mask: Tensor | None) -> Tensor:
        out, _ = self.self_attn(x, x, x, mask=mask)
        return self.dropout(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout(self.feed_forward(x))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask))
            x = self.norm2(x + self._ff_block(x))
        return x


class EncSublayerLoop(nn.Module):
    """Own __init__ with two dropout modules, and a loop over (sub-layer, norm) pairs."""

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
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.drop1, self.drop2 = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1, self.drop1),
            (self.feed_forward, self.norm2, self.drop2),
        ]
        for sublayer, norm, drop in steps:
            if self.norm_first:
                x = x + drop(sublayer(norm(x)))
            else:
                x = norm(x + drop(sublayer(x)))
        return x


class EncNeedWeightsTuple(_Base):
    """Asks for the weights too and keeps them on the module for plotting."""

    def forward(self, x: Tensor, src_mask: Tensor, keep_weights: bool = False) -> Tensor:
        residual = x
        h = self.norm1(x) if self.norm_first else x
        out, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=keep_weights)
        if keep_weights:
            self.last_weights = weights.detach()
        x = residual + self.dropout(out)
        if not self.norm_first:
            x = self.norm1(x)
        residual = x
        h = self.norm2(x) if self.norm_first else x
        x = residual + self.dropout(self.feed_forward(h))
        if not self.norm_first:
            x = self.norm2(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual connection around self-attention: the block goes on from the "
        "attention output alone.",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "I forgot to add x back after the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I overwrote x with norm(x) and added the sub-layer to that, so the "
        "residual stream itself gets normalized.",
    ),
    BlindCase(
        CHECK,
        "postnorm_on_branch",
        EncPostNormOnBranch,
        "mistake",
        "For post-norm I wrote x + norm(sublayer(x)): the LayerNorm on the branch, not after "
        "the sum.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward network before self-attention.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True means padding as in nn.MultiheadAttention.",
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
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed src_mask to (B, 1, S, 1), so it masks the padded queries instead of the "
        "padded keys.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncIgnoresNormFirst,
        "mistake",
        "I stored norm_first but always compute post-norm.",
    ),
    BlindCase(
        CHECK,
        "norm_first_reversed",
        EncNormFirstReversed,
        "mistake",
        "I read norm_first the wrong way round: pre-norm when it is False.",
    ),
    BlindCase(
        CHECK,
        "prenorm_only_query_normed",
        EncPreNormOnlyQuery,
        "mistake",
        "In pre-norm I normalized only the query; keys and values come from the un-normalized x.",
    ),
    BlindCase(
        CHECK,
        "prenorm_final_norm_in_block",
        EncPreNormFinalNorm,
        "mistake",
        "In pre-norm I apply norm2 once more at the end of the block, since pre-norm needs a "
        "final LayerNorm.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        EncNormsSwapped,
        "mistake",
        "I used norm2 for the attention sub-layer and norm1 for the feed-forward one.",
    ),
    BlindCase(
        CHECK,
        "forgot_to_unpack_attention",
        EncForgotUnpack,
        "mistake",
        "I used the result of self_attn directly, forgetting that it returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "helper_methods",
        EncHelperMethods,
        "correct",
        "Written like nn.TransformerEncoderLayer, with _sa_block and _ff_block helpers and "
        "src_mask=None as default.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop_two_dropouts",
        EncSublayerLoop,
        "correct",
        "Its own __init__ with two dropout modules, and one loop over (sub-layer, norm, "
        "dropout) triples.",
    ),
    BlindCase(
        CHECK,
        "explicit_residual_variable",
        EncNeedWeightsTuple,
        "correct",
        "Keeps the residual in its own variable, asks for the weights only when an extra "
        "keep_weights argument (default False) is set.",
    ),
]
