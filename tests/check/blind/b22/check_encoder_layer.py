"""Blind set B22, check_encoder_layer (chapter 13): encoder blocks as readers write them."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The layers every reader builds the same way; each case writes its own forward."""

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


class EncNoAttnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncNoFfnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(self.dropout(self.feed_forward(x)))
        return x


class EncAlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncPreNormResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._sa(h, src_mask))
            h = self.norm2(x)
            x = h + self.dropout(self.feed_forward(h))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncPostNormOnSublayerOnly(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = x + self.norm1(self.dropout(self._sa(x, src_mask)))
            x = x + self.norm2(self.dropout(self.feed_forward(x)))
        return x


class EncInvertedMask(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, the mask to block
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncMaskUnused(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): one entry per position
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncFfnFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            x = x + self.dropout(self._sa(self.norm2(x), src_mask))
        else:
            x = self.norm1(x + self.dropout(self.feed_forward(x)))
            x = self.norm2(x + self.dropout(self._sa(x, src_mask)))
        return x


class EncPreNormKeysUnnormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncPreNormFfnNotNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(x))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncPostNormMissingSecondNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = x + self.dropout(self.feed_forward(x))
        return x


class EncFfnReadsBlockInput(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = x + self.dropout(self._sa(self.norm1(x), src_mask))
            out = a + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            a = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            out = self.norm2(a + self.dropout(self.feed_forward(x)))
        return out


class EncNamedFfn(nn.Module):
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
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            x = x + self.dropout(self.ffn(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
            x = self.norm2(x + self.dropout(self.ffn(x)))
        return x


class EncReturnsTuple(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        if self.norm_first:
            h = self.norm1(x)
            a, w = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
            x = x + self.dropout(a)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            a, w = self.self_attn(x, x, x, mask=src_mask, need_weights=True)
            x = self.norm1(x + self.dropout(a))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, w


# ---------------------------------------------------------------- correct variants


class EncSublayerHelper(_Layers):
    def _add_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self._sa(h, src_mask), self.norm1)
        return self._add_norm(x, self.feed_forward, self.norm2)


class EncTwoDropoutsKeywords(nn.Module):
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
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.dropout1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        residual = x
        h = self.norm1(x) if self.norm_first else x
        out, _ = self.self_attn(query=h, key=h, value=h, mask=src_mask)
        x = residual + self.dropout1(out)
        if not self.norm_first:
            x = self.norm1(x)
        residual = x
        h = self.norm2(x) if self.norm_first else x
        x = residual + self.dropout2(self.feed_forward(h))
        if not self.norm_first:
            x = self.norm2(x)
        return x


class EncProjectKvFunctionalNorm(_Layers):
    def _norm(self, x: Tensor, norm: nn.LayerNorm) -> Tensor:
        return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        h = self._norm(x, self.norm1) if self.norm_first else x
        k, v = self.self_attn.project_kv(h, h)
        x = x + self.dropout(self.self_attn.attend(h, k, v, mask=src_mask)[0])
        if not self.norm_first:
            x = self._norm(x, self.norm1)
        h = self._norm(x, self.norm2) if self.norm_first else x
        x = x + self.dropout(self.feed_forward(h))
        return x if self.norm_first else self._norm(x, self.norm2)


class EncSublayerLoop(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        steps = [
            (lambda h: self._sa(h, src_mask.bool()), self.norm1),
            (self.feed_forward, self.norm2),
        ]
        for sublayer, norm in steps:
            if self.norm_first:
                x = x + self.dropout(sublayer(norm(x)))
            else:
                x = norm(x + self.dropout(sublayer(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot to add x back after self-attention; only the FFN has its residual.",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "The feed-forward sub-layer has no residual connection: I normalised its output alone.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but always wrote the post-norm formula, so pre-norm never happens.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I overwrote x with norm(x) and added the sub-layer to that, so the "
        "residual carries the normalised vector, not the raw stream.",
    ),
    BlindCase(
        CHECK,
        "postnorm_norm_on_sublayer",
        EncPostNormOnSublayerOnly,
        "mistake",
        "In post-norm I wrote x + norm(sublayer(x)): the LayerNorm is on the sub-layer output "
        "before the addition, not on the sum.",
    ),
    BlindCase(
        CHECK,
        "inverted_mask",
        EncInvertedMask,
        "mistake",
        "I passed ~src_mask, thinking the attention wants True where a key is blocked.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskUnused,
        "mistake",
        "I called self_attn(x, x, x) and never passed src_mask, so padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the mask to (B, 1, S, 1), so it blanks padded query rows instead of "
        "hiding the padded keys.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward sub-layer first and self-attention second.",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_unnormed",
        EncPreNormKeysUnnormed,
        "mistake",
        "In pre-norm I normalised only the query: the keys and values come from the raw x.",
    ),
    BlindCase(
        CHECK,
        "prenorm_ffn_unnormed",
        EncPreNormFfnNotNormed,
        "mistake",
        "In pre-norm I forgot norm2 before the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "postnorm_missing_norm2",
        EncPostNormMissingSecondNorm,
        "mistake",
        "In post-norm the block ends with x + ffn(x); I left out the second LayerNorm.",
    ),
    BlindCase(
        CHECK,
        "ffn_reads_block_input",
        EncFfnReadsBlockInput,
        "mistake",
        "I kept the attention result in a new variable but fed the FFN the block's input x.",
    ),
    BlindCase(
        CHECK,
        "ffn_named_ffn",
        EncNamedFfn,
        "mistake",
        "I called the feed-forward layer self.ffn instead of self.feed_forward.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_too",
        EncReturnsTuple,
        "mistake",
        "My forward returns (x, attention weights), like the attention layer does.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        EncSublayerHelper,
        "correct",
        "A helper method that does Add & Norm in either mode, called with a lambda for attention.",
    ),
    BlindCase(
        CHECK,
        "two_dropouts_keywords",
        EncTwoDropoutsKeywords,
        "correct",
        "Separate dropout1/dropout2 modules, a saved residual, keyword arguments for the "
        "attention call and src_mask optional.",
    ),
    BlindCase(
        CHECK,
        "project_kv_functional_norm",
        EncProjectKvFunctionalNorm,
        "correct",
        "Attention through project_kv and attend, and F.layer_norm with the norms' weights.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop",
        EncSublayerLoop,
        "correct",
        "A loop over (sublayer, norm) pairs; the mask passed through .bool().",
    ),
]
