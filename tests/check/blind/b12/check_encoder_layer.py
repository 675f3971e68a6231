"""Blind set B12, check_encoder_layer (chapter 13): one encoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The book's layers; subclasses write forward."""

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


class EncPostNormAlways(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # norm_first is stored but I only wrote the paper's post-norm
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormNormalizesResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)  # normalize once and carry the normalized x on the residual
            x = x + self.dropout(self._sa(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormBeforeAdd(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._sa(x, src_mask)))  # Add & Norm read as x + Norm(.)
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._sa(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._sa(x, src_mask)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding to hide, as in nn.MultiheadAttention
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskIgnored(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncOneNormTwice(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # both sub-layers use norm1: norm2 is created but never used
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncFfnReadsInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return h + self.dropout(self.feed_forward(self.norm2(x)))  # FFN of the block's input
        h = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(h + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): "which positions are real"
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncWithHelper(_Base):
    """A helper method for Add & Norm, and an extra optional argument."""

    def add_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))

    def forward(self, x: Tensor, src_mask: Tensor, return_weights: bool = False) -> Tensor:
        x = self.add_norm(x, lambda h: self._sa(h, src_mask), self.norm1)
        return self.add_norm(x, self.feed_forward, self.norm2)


class EncTwoBranches(_Base):
    """Two explicit branches, separate dropout modules, the mask cast to bool."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        src_mask = src_mask.bool()
        if not self.norm_first:
            a, _ = self.self_attn(x, x, x, mask=src_mask)
            y = self.norm1(x + self.drop1(a))
            return self.norm2(y + self.drop2(self.feed_forward(y)))
        h = self.norm1(x)
        y = x + self.drop1(self.self_attn(h, h, h, mask=src_mask)[0])
        z = self.norm2(y)
        return y + self.drop2(self.feed_forward(z))


class EncExpandedMask(_Base):
    """The padding mask broadcast to (B, 1, S, S) first, and the residuals added with torch.add."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        mask = src_mask.expand(-1, -1, S, -1)
        if self.norm_first:
            x = torch.add(x, self.dropout(self._sa(self.norm1(x), mask)))
            return torch.add(x, self.dropout(self.feed_forward(self.norm2(x))))
        x = self.norm1(torch.add(x, self.dropout(self._sa(x, mask))))
        return self.norm2(torch.add(x, self.dropout(self.feed_forward(x))))


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual around self-attention: only the sub-layer's output goes on.",
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
        "post_norm_only",
        EncPostNormAlways,
        "mistake",
        "I stored norm_first but always computed the post-norm block.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_normalizes_stream",
        EncPreNormNormalizesResidual,
        "mistake",
        "In pre-norm I replaced x by norm(x), so the residual carries the normalized x.",
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer_only",
        EncNormBeforeAdd,
        "mistake",
        "Post-norm as x + norm(sublayer(x)): I normalized the sub-layer output, not the sum.",
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
        "I passed ~src_mask, thinking True marks the padding to hide.",
    ),
    BlindCase(
        CHECK,
        "mask_not_used",
        EncMaskIgnored,
        "mistake",
        "I called self-attention without the mask, so padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "norm1_used_twice",
        EncOneNormTwice,
        "mistake",
        "I used norm1 for both sub-layers; norm2 exists but is never used.",
    ),
    BlindCase(
        CHECK,
        "ffn_reads_block_input",
        EncFfnReadsInput,
        "mistake",
        "The feed-forward network reads the block's input x instead of the attention "
        "sub-layer's output.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the padding mask to (B, 1, S, 1), so it hides padded queries, not keys.",
    ),
    BlindCase(
        CHECK,
        "helper_method",
        EncWithHelper,
        "correct",
        "An add_norm helper method and an unused optional argument with a default.",
    ),
    BlindCase(
        CHECK,
        "two_branches_two_dropouts",
        EncTwoBranches,
        "correct",
        "Explicit if/else for post- and pre-norm, one Dropout module per sub-layer.",
    ),
    BlindCase(
        CHECK,
        "expanded_mask",
        EncExpandedMask,
        "correct",
        "The mask expanded to (B, 1, S, S) first; residuals with torch.add.",
    ),
]
