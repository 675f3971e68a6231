"""Blind set B15, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The book's layers; each case below overrides forward only."""

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


class EncIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualNormalized(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._attn(h, src_mask))  # residual from the normed x
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, to be hidden
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncOneNormTwice(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        norm = self.norm1  # a LayerNorm has no state, so one is enough
        if self.norm_first:
            x = x + self.dropout(self._attn(norm(x), src_mask))
            return x + self.dropout(self.feed_forward(norm(x)))
        x = norm(x + self.dropout(self._attn(x, src_mask)))
        return norm(x + self.dropout(self.feed_forward(x)))


class EncFfnResidualFromInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(a)))  # x: the block's input
        a = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(a)))


class EncMaskOnQueries(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-2, -1)  # (B, 1, S, 1): one row per position
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreAndPostNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:  # normalise the input and the sum, to be safe
            x = self.norm1(x + self.dropout(self._attn(self.norm1(x), src_mask)))
            return self.norm2(x + self.dropout(self.feed_forward(self.norm2(x))))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormBeforeResidualAdd(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))  # Add after the Norm
        return x + self.norm2(self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncSublayerHelper(_Base):
    """A helper method for Add & Norm, used for both sub-layers."""

    def sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        x = self.sublayer(x, lambda h: self._attn(h, src_mask), self.norm1)
        return self.sublayer(x, self.feed_forward, self.norm2)


class EncFunctionalDropout(nn.Module):
    """No nn.Dropout module: F.dropout with self.training; keyword arguments for attention."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.p = dropout
        self.norm_first = norm_first
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def drop(t: Tensor) -> Tensor:
            return F.dropout(t, self.p, training=self.training)

        h = self.norm1(x) if self.norm_first else x
        out, _ = self.self_attn(query=h, key=h, value=h, mask=src_mask)
        x = x + drop(out)
        if not self.norm_first:
            x = self.norm1(x)
        h = self.norm2(x) if self.norm_first else x
        x = x + drop(self.feed_forward(h))
        return x if self.norm_first else self.norm2(x)


class EncTwoBranches(_Base):
    """Two separate dropouts and the two norm placements written as two methods."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.dropout1 = nn.Dropout(self.dropout.p)
        self.dropout2 = nn.Dropout(self.dropout.p)

    def _post(self, x: Tensor, mask: Tensor) -> Tensor:
        attn_out, _weights = self.self_attn(x, x, x, mask=mask)
        x = self.norm1(x + self.dropout1(attn_out))
        return self.norm2(x + self.dropout2(self.feed_forward(x)))

    def _pre(self, x: Tensor, mask: Tensor) -> Tensor:
        h = self.norm1(x)
        attn_out, _weights = self.self_attn(h, h, h, mask=mask)
        x = x + self.dropout1(attn_out)
        return x + self.dropout2(self.feed_forward(self.norm2(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        return self._pre(x, src_mask) if self.norm_first else self._post(x, src_mask)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual connection around the self-attention: only its output goes on.",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        EncIgnoresNormFirst,
        "mistake",
        "I stored norm_first but always wrote the post-norm block.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_normalized",
        EncPreNormResidualNormalized,
        "mistake",
        "In pre-norm I normalised x and then added the sub-layer to the normalised x, "
        "so the residual stream is normalised too.",
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
        "I passed ~src_mask, thinking True marks the padding to hide as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskUnused,
        "mistake",
        "I called self_attn(x, x, x) and forgot to pass the padding mask.",
    ),
    BlindCase(
        CHECK,
        "one_norm_for_both",
        EncOneNormTwice,
        "mistake",
        "I used norm1 for both sub-layers; norm2 exists but is never used.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_input",
        EncFfnResidualFromInput,
        "mistake",
        "The residual around the feed-forward network adds the block's input x, "
        "not the output of the attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the mask to (B, 1, S, 1), so it hides the padded queries, not the keys.",
    ),
    BlindCase(
        CHECK,
        "pre_and_post_norm",
        EncPreAndPostNorm,
        "mistake",
        "For norm_first I normalised both before the sub-layer and after the addition.",
    ),
    BlindCase(
        CHECK,
        "norm_before_add",
        EncNormBeforeResidualAdd,
        "mistake",
        "Post-norm written as x + norm(sublayer(x)): the LayerNorm on the branch, not the sum.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        EncSublayerHelper,
        "correct",
        "A sublayer() helper method does Add & Norm; src_mask has a default of None.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout",
        EncFunctionalDropout,
        "correct",
        "F.dropout with training=self.training instead of an nn.Dropout; the attention called "
        "with keyword arguments; the norm placement switched inline.",
    ),
    BlindCase(
        CHECK,
        "two_methods_two_dropouts",
        EncTwoBranches,
        "correct",
        "Separate _pre and _post methods and two extra dropout modules.",
    ),
]
