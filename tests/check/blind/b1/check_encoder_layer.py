"""Blind cases for check_encoder_layer (chapter 13)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
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

    def sa(self, h, mask):
        return self.self_attn(h, h, h, mask=mask)[0]


class EncNoAttnResidual(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = self.dropout(self.sa(self.norm1(x), src_mask))  # residual forgotten
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self.sa(h, src_mask))  # residual from the normalized x
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self.sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstIgnored(_Base):
    def forward(self, x, src_mask):
        x = self.norm1(x + self.dropout(self.sa(x, src_mask)))  # always post-norm
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFFNFirst(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self.sa(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self.sa(x, src_mask)))


class EncMaskInverted(_Base):
    def forward(self, x, src_mask):
        mask = ~src_mask  # True = padding to be blocked
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.sa(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPostNormNormsSublayer(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self.sa(x, src_mask)))  # normalizes the sub-layer only
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncNorm1Twice(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))  # norm1 again
        x = self.norm1(x + self.dropout(self.sa(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncPreNormFinalNorm(_Base):
    def forward(self, x, src_mask):
        if self.norm_first:
            x = x + self.dropout(self.sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # an extra LayerNorm on the way out
        x = self.norm1(x + self.dropout(self.sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReturnsWeights(_Base):
    def forward(self, x, src_mask):
        h = self.norm1(x) if self.norm_first else x
        out, w = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
        x = x + self.dropout(out) if self.norm_first else self.norm1(x + self.dropout(out))
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, w  # returns the weights too


class EncSublayerHelper(_Base):
    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        return self._add_norm(x, self.feed_forward, self.norm2)


class EncFunctionalNorms(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.d_model = d_model
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.drop = dropout
        self.norm_first = norm_first

    def _ln(self, x, norm):
        return F.layer_norm(x, (self.d_model,), norm.weight, norm.bias, norm.eps)

    def forward(self, x, src_mask):
        p = self.drop if self.training else 0.0
        if not self.norm_first:
            a, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self._ln(x + F.dropout(a, p), self.norm1)
            x = self._ln(x + F.dropout(self.feed_forward(x), p), self.norm2)
            return x
        h = self._ln(x, self.norm1)
        a, _ = self.self_attn(h, h, h, mask=src_mask)
        x = x + F.dropout(a, p)
        return x + F.dropout(self.feed_forward(self._ln(x, self.norm2)), p)


CASES = [
    BlindCase(
        CHECK,
        "no_residual_around_attention",
        EncNoAttnResidual,
        "mistake",
        "forgets to add x back around the self-attention sub-layer",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed_x",
        EncPreNormResidualFromNormed,
        "mistake",
        "in pre-norm, overwrites x with norm(x) and adds the sub-layer to the normalized x",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncNormFirstIgnored,
        "mistake",
        "stores norm_first but always computes post-norm",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFFNFirst,
        "mistake",
        "applies the feed-forward network before the self-attention",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "passes ~src_mask to the attention, thinking True means padding",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "calls the self-attention without the padding mask",
    ),
    BlindCase(
        CHECK,
        "postnorm_norms_only_sublayer",
        EncPostNormNormsSublayer,
        "mistake",
        "in post-norm, computes x + norm(sublayer(x)) instead of norm(x + sublayer(x))",
    ),
    BlindCase(
        CHECK,
        "norm1_used_twice",
        EncNorm1Twice,
        "mistake",
        "uses norm1 for both sub-layers, never norm2",
    ),
    BlindCase(
        CHECK,
        "prenorm_extra_final_norm",
        EncPreNormFinalNorm,
        "mistake",
        "in pre-norm, normalizes the block's output again with norm2 at the end",
    ),
    BlindCase(
        CHECK,
        "slip_returns_output_and_weights",
        EncReturnsWeights,
        "mistake",
        "returns the pair (x, attention weights) instead of x",
    ),
    BlindCase(
        CHECK,
        "add_norm_helper",
        EncSublayerHelper,
        "correct",
        "writes one _add_norm helper for both sub-layers and makes src_mask optional",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm_and_dropout",
        EncFunctionalNorms,
        "correct",
        "applies the norms with F.layer_norm on norm1/norm2's parameters and dropout with F.dropout",
    ),
]
