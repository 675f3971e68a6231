"""Blind set B14, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The book's layers, shared by every case below (only ``forward`` differs)."""

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
        x = self.norm1(self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormBeforeAdd(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # "Add & Norm": I normalize the sub-layer output, then add it
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._sa(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # I mixed up which of the two is "norm first"
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._sa(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._sa(x, src_mask)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, as nn.MultiheadAttention wants it
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskNotPassed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncOneNormTwice(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self._sa(x, src_mask))  # residual taken after the norm
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
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


class EncFfnResidualFromInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(a)))  # added the block's input
        a = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(a)))


# ---------------------------------------------------------------- correct variants


class EncInline(nn.Module):
    """Everything written out, with F.dropout and the training flag instead of a module."""

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
        self.p = dropout
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        p, train = self.p, self.training
        if self.norm_first:
            h = self.norm1(x)
            out, _ = self.self_attn(h, h, h, mask=src_mask)
            x = x + F.dropout(out, p, train)
            x = x + F.dropout(self.feed_forward(self.norm2(x)), p, train)
            return x
        out, _ = self.self_attn(x, x, x, mask=src_mask)
        x = self.norm1(x + F.dropout(out, p, train))
        x = self.norm2(x + F.dropout(self.feed_forward(x), p, train))
        return x


class EncSublayerHelper(_Base):
    """A generic sub-layer helper method and an extra optional argument."""

    def sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor, return_weights: bool = False) -> Tensor:
        store = {}

        def attend(h: Tensor) -> Tensor:
            out, store["w"] = self.self_attn(h, h, h, src_mask)
            return out

        x = self.sublayer(x, attend, self.norm1)
        x = self.sublayer(x, self.feed_forward, self.norm2)
        return (x, store["w"]) if return_weights else x


class EncModuleList(_Base):
    """The two sub-layers and their norms zipped in a loop."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        steps = [(lambda h: self._sa(h, src_mask), self.norm1), (self.feed_forward, self.norm2)]
        for fn, norm in steps:
            if self.norm_first:
                x = x + self.dropout(fn(norm(x)))
            else:
                residual = x
                x = fn(x)
                x = self.dropout(x)
                x += residual  # in place, on my own temporary
                x = norm(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot to add x back after the self-attention; only the FFN has a residual.",
    ),
    BlindCase(
        CHECK,
        "norm_before_add",
        EncNormBeforeAdd,
        "mistake",
        "In post-norm I normalized the sub-layer output and then added x: x + norm(sub(x)).",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        EncIgnoresNormFirst,
        "mistake",
        "I stored norm_first but always wrote post-norm.",
    ),
    BlindCase(
        CHECK,
        "norm_first_swapped",
        EncNormFirstSwapped,
        "mistake",
        "I swapped the branches: pre-norm when norm_first is False and post-norm when True.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I ran the feed-forward network first and the self-attention second.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True must mean padding as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskNotPassed,
        "mistake",
        "I called self_attn(x, x, x) and never gave it the padding mask.",
    ),
    BlindCase(
        CHECK,
        "one_norm_twice",
        EncOneNormTwice,
        "mistake",
        "I used norm1 for both sub-layers; norm2 is created but never used.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I overwrote x with norm(x), so the residual adds the normalized x.",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_unnormed",
        EncPreNormKeysUnnormed,
        "mistake",
        "In pre-norm I normalized only the query; keys and values are the raw x.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_input",
        EncFfnResidualFromInput,
        "mistake",
        "The FFN's residual adds the block's input x instead of the attention output.",
    ),
    BlindCase(
        CHECK,
        "inline_functional_dropout",
        EncInline,
        "correct",
        "Written out without a helper, dropout as F.dropout(p, self.training).",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper_extra_arg",
        EncSublayerHelper,
        "correct",
        "A sublayer helper method, mask passed positionally, and an optional return_weights.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        EncModuleList,
        "correct",
        "Loops over (sub-layer, norm) pairs; adds the residual in place on a temporary.",
    ),
]
