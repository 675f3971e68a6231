"""Blind set B33, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _EncoderLayers(nn.Module):
    """The layers every answer below builds, with the book's names."""

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


class EncNoResidualAttention(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoResidualFFN(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncAlwaysPostNorm(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstInverted(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # norm first
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualNormalized(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self._attn(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFFNFirst(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncMaskInverted(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # True where attention is blocked, as nn.MultiheadAttention wants
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): padding tokens ask nothing
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFFNResidualFromInput(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(a)))
        a = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(a)))


class EncNormOnSublayerOutput(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))  # Add & Norm
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormQueryOnly(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.self_attn(self.norm1(x), x, x, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncOneNormTwice(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))  # the same LayerNorm
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncExtraRelu(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(F.relu(self.feed_forward(self.norm2(x))))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(F.relu(self.feed_forward(x))))


class EncInPlaceAdd(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x += self.dropout(self._attn(self.norm1(x), src_mask))
            x += self.dropout(self.feed_forward(self.norm2(x)))
            return x
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncExplicitBranches(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, src_mask=None):
        if self.norm_first:
            h = self.norm1(x)
            attn_out, _ = self.self_attn(h, h, h, mask=src_mask)
            x = x + self.dropout1(attn_out)
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            attn_out, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self.norm1(x + self.dropout1(attn_out))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x


class EncSublayerHelper(_EncoderLayers):
    def _sublayer(self, x: Tensor, norm: nn.LayerNorm, fn) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sublayer(x, self.norm1, lambda h: self._attn(h, src_mask))
        return self._sublayer(x, self.norm2, self.feed_forward)


class EncProjectThenAttend(_EncoderLayers):
    def forward(self, x: Tensor, src_mask: Tensor | None = None, **unused) -> Tensor:
        def attend(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=src_mask)[0]

        if self.norm_first:
            x = x + self.dropout(attend(self.norm1(x)))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        y = self.norm1(x + self.dropout(attend(x)))
        return self.norm2(y + self.dropout(self.feed_forward(y)))


class EncFunctionalLayerNorm(_EncoderLayers):
    def _ln(self, norm: nn.LayerNorm, x: Tensor) -> Tensor:
        return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        pre = self.norm_first
        h = self._ln(self.norm1, x) if pre else x
        x = x + self.dropout(self._attn(h, src_mask))
        if not pre:
            x = self._ln(self.norm1, x)
        h = self._ln(self.norm2, x) if pre else x
        x = x + self.dropout(self.feed_forward(h))
        return x if pre else self._ln(self.norm2, x)


CASES = [
    BlindCase(
        CHECK,
        "no_residual_around_attention",
        EncNoResidualAttention,
        "mistake",
        "I forgot to add x back around the self-attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "no_residual_around_ffn",
        EncNoResidualFFN,
        "mistake",
        "I forgot the residual connection around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but always wrote the post-norm formula.",
    ),
    BlindCase(
        CHECK,
        "norm_first_inverted",
        EncNormFirstInverted,
        "mistake",
        "I wrote `if not self.norm_first` for the pre-norm branch.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_normalized",
        EncPreNormResidualNormalized,
        "mistake",
        "In pre-norm I assigned x = norm(x) first, so the residual carries the normalized x.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFFNFirst,
        "mistake",
        "I applied the feed-forward network first and the self-attention second.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True must mark the padding to block.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskUnused,
        "mistake",
        "I called self_attn(x, x, x) without the mask.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed src_mask to (B, 1, S, 1) so that the padding positions do not attend.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_block_input",
        EncFFNResidualFromInput,
        "mistake",
        "Around the feed-forward network I added the block's input x instead of the attention "
        "sub-layer's output.",
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer_output",
        EncNormOnSublayerOutput,
        "mistake",
        "For post-norm I wrote x + norm(sublayer(x)), normalizing only the branch.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_only_query_normalized",
        EncPreNormQueryOnly,
        "mistake",
        "In pre-norm I passed norm1(x) as the query but x itself as key and value.",
    ),
    BlindCase(
        CHECK,
        "norm1_used_twice",
        EncOneNormTwice,
        "mistake",
        "I used norm1 for both sub-layers; norm2 is created but never used.",
    ),
    BlindCase(
        CHECK,
        "relu_after_ffn",
        EncExtraRelu,
        "mistake",
        "I added a ReLU after the feed-forward network's output.",
    ),
    BlindCase(
        CHECK,
        "in_place_residual",
        EncInPlaceAdd,
        "mistake",
        "In pre-norm I wrote x += ... for the residual connections.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        EncExplicitBranches,
        "correct",
        "if/else for the two norms written out, two separate dropout modules, src_mask optional.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        EncSublayerHelper,
        "correct",
        "A small _sublayer(x, norm, fn) method for Add & Norm, called once per sub-layer.",
    ),
    BlindCase(
        CHECK,
        "project_kv_then_attend",
        EncProjectThenAttend,
        "correct",
        "Self-attention through project_kv and attend, extra keyword arguments accepted.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        EncFunctionalLayerNorm,
        "correct",
        "F.layer_norm with the LayerNorm modules' weight, bias and eps, one code path with two "
        "conditions.",
    ),
]
