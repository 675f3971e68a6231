"""Blind set B30, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The book's layers under the book's names, shared by the mistakes that are in
    ``forward``."""

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


class EncNoAttentionResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncAlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0])
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFeedForwardFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            h = self.norm1(x)
            return x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        pad = ~src_mask  # True where the padding is, as nn.Transformer wants
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=pad)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=pad)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormsSwapped(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm2(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncReturnsWeights(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        if self.norm_first:
            h = self.norm1(x)
            a, w = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
            x = x + self.dropout(a)
            return x + self.dropout(self.feed_forward(self.norm2(x))), w
        a, w = self.self_attn(x, x, x, mask=src_mask, need_weights=True)
        x = self.norm1(x + self.dropout(a))
        return self.norm2(x + self.dropout(self.feed_forward(x))), w


class EncOtherNames(nn.Module):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.ln1(x)
            x = x + self.drop(self.attn(h, h, h, mask=src_mask)[0])
            return x + self.drop(self.ffn(self.ln2(x)))
        x = self.ln1(x + self.drop(self.attn(x, x, x, mask=src_mask)[0]))
        return self.ln2(x + self.drop(self.ffn(x)))


class EncPreNormFinalNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return F.layer_norm(x, x.shape[-1:])  # pre-norm needs a LayerNorm at the end
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormRawKeys(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.self_attn(self.norm1(x), x, x, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): padded positions attend to nothing
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormPlusSublayer(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x) + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0])
        return self.norm2(x) + self.dropout(self.feed_forward(x))


# ---------------------------------------------------------------- correct variants


class EncTwoBranches(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # the paper: Add, then Norm
            attn_out, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self.norm1(x + self.dropout(attn_out))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
            return x
        h = self.norm1(x)
        attn_out, _ = self.self_attn(h, h, h, mask=src_mask)
        x = x + self.dropout(attn_out)
        x = x + self.dropout(self.feed_forward(self.norm2(x)))
        return x


class EncSublayerHelper(nn.Module):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.p = dropout  # no module: F.dropout in forward
        self.norm_first = norm_first

    def _sublayer(self, x: Tensor, norm: nn.LayerNorm, fn) -> Tensor:
        drop = lambda t: F.dropout(t, self.p, self.training)  # noqa: E731
        return x + drop(fn(norm(x))) if self.norm_first else norm(x + drop(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor, need_weights: bool = False) -> Tensor:
        x = self._sublayer(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=src_mask)[0])
        return self._sublayer(x, self.norm2, self.feed_forward)


class EncFunctionalNorm(_Layers):
    def _norm(self, ln: nn.LayerNorm, x: Tensor) -> Tensor:
        return F.layer_norm(x, ln.normalized_shape, ln.weight, ln.bias, ln.eps)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.expand(-1, 1, x.shape[1], -1)  # (B, 1, S, S), the same keys per query
        h = self._norm(self.norm1, x) if self.norm_first else x
        y = x + self.dropout(self.self_attn(query=h, key=h, value=h, mask=mask)[0])
        x = y if self.norm_first else self._norm(self.norm1, y)
        h = self._norm(self.norm2, x) if self.norm_first else x
        y = x + self.dropout(self.feed_forward(h))
        return y if self.norm_first else self._norm(self.norm2, y)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttentionResidual,
        "mistake",
        "I forgot the residual connection around the self-attention.",
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
        "pre_norm_residual_normalized",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I wrote x = norm(x) first and then added the sub-layer to that, so the "
        "residual stream is normalised.",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        EncFeedForwardFirst,
        "mistake",
        "I applied the feed-forward network before the self-attention.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True should mark the padding as in nn.Transformer.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskUnused,
        "mistake",
        "I called self.self_attn(x, x, x) without the mask.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        EncNormsSwapped,
        "mistake",
        "I used norm2 for the attention sub-layer and norm1 for the feed-forward.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_too",
        EncReturnsWeights,
        "mistake",
        "forward returns (x, attention weights), like MultiHeadAttention does.",
    ),
    BlindCase(
        CHECK,
        "own_layer_names",
        EncOtherNames,
        "mistake",
        "The block is right but I named the layers attn, ffn, ln1 and ln2.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_extra_final_norm",
        EncPreNormFinalNorm,
        "mistake",
        "In pre-norm I normalised the block's output at the end as well, since the text says "
        "pre-norm ends with one more LayerNorm.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_raw_keys",
        EncPreNormRawKeys,
        "mistake",
        "In pre-norm I normalised only the query: self_attn(norm1(x), x, x).",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed src_mask to (B, 1, S, 1), so it blocks the padded queries instead of "
        "the padded keys.",
    ),
    BlindCase(
        CHECK,
        "norm_plus_sublayer",
        EncNormPlusSublayer,
        "mistake",
        "In post-norm I wrote norm(x) + sublayer(x) instead of norm(x + sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "two_branches",
        EncTwoBranches,
        "correct",
        "Post-norm and pre-norm written as two separate branches of forward.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        EncSublayerHelper,
        "correct",
        "One helper method for Add & Norm, F.dropout instead of a Dropout module, an extra "
        "need_weights argument that defaults to False.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        EncFunctionalNorm,
        "correct",
        "F.layer_norm with the LayerNorms' parameters, attention called with keywords and "
        "the mask expanded to (B, 1, S, S).",
    ),
]
