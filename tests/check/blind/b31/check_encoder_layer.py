"""Blind set B31, check_encoder_layer (chapter 13): one encoder block as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The book's layer names; every reader's block below builds the same ones."""

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


class EncNoAttnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFfnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormAddsNormed(_Layers):
    """Pre-norm with the normalized x as the residual, not the stream itself."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._attn(h, src_mask))
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncAlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # I mixed up which flag value is pre-norm
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, as in nn.MultiheadAttention
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return x + self.dropout(self._attn(self.norm1(x), src_mask))
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return self.norm1(x + self.dropout(self._attn(x, src_mask)))


class EncPreNormKeysUnnormed(_Layers):
    """Pre-norm: only the query is normalized, keys and values read the raw stream."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.self_attn(self.norm1(x), x, x, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncDropoutAlwaysOn(_Layers):
    """The paper's P_drop = 0.1 written in, with F.dropout's default training=True."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + F.dropout(self._attn(self.norm1(x), src_mask), p=0.1)
            return x + F.dropout(self.feed_forward(self.norm2(x)), p=0.1)
        x = self.norm1(x + F.dropout(self._attn(x, src_mask), p=0.1))
        return self.norm2(x + F.dropout(self.feed_forward(x), p=0.1))


class EncPreNormFinalNorm(_Layers):
    """Pre-norm needs a final LayerNorm, so I put one at the end of the block."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReluAfterFfn(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(torch.relu(self.feed_forward(self.norm2(x))))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(torch.relu(self.feed_forward(x))))


class EncMaskOnQueries(_Layers):
    """The (B, 1, 1, S) mask turned to (B, 1, S, 1) 'to match the scores'."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReturnsWeights(_Layers):
    """Returns the attention weights too, like MultiHeadAttention does."""

    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        h = self.norm1(x) if self.norm_first else x
        out, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
        if self.norm_first:
            x = x + self.dropout(out)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(out))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights


class EncPostNormNormInside(_Layers):
    """Post-norm written as x + norm(sublayer(x))."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncSublayerHelper(_Layers):
    """A helper method for Add & Norm, keyword arguments to the attention."""

    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        x = self._add_norm(
            x, lambda h: self.self_attn(query=h, key=h, value=h, mask=src_mask)[0], self.norm1
        )
        return self._add_norm(x, self.feed_forward, self.norm2)


class EncTwoDropouts(nn.Module):
    """Written from scratch: two dropout modules, F.dropout tied to self.training."""

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
        self.p = dropout
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            a, _ = self.self_attn(h, h, h, src_mask)
            x = x + F.dropout(a, self.p, self.training)
            f = self.feed_forward(self.norm2(x))
            return x + F.dropout(f, self.p, self.training)
        a, _ = self.self_attn(x, x, x, src_mask)
        x = self.norm1(x + F.dropout(a, self.p, self.training))
        f = self.feed_forward(x)
        return self.norm2(x + F.dropout(f, self.p, self.training))


class EncExpandedMask(_Layers):
    """The mask expanded to the full (B, 1, S, S) before it goes to the attention."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        mask = src_mask.expand(-1, -1, S, -1)
        residual = x
        if self.norm_first:
            x = residual + self.dropout(self._attn(self.norm1(residual), mask))
            residual = x
            x = residual + self.dropout(self.feed_forward(self.norm2(residual)))
        else:
            x = self.norm1(residual + self.dropout(self._attn(residual, mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot to add x back after the self-attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "I forgot the residual connection around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormAddsNormed,
        "mistake",
        "In pre-norm I wrote h = norm(x); x = h + sublayer(h), so the residual is the normalized x.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but always computed the post-norm block.",
    ),
    BlindCase(
        CHECK,
        "norm_first_inverted",
        EncNormFirstInverted,
        "mistake",
        "I did pre-norm when norm_first is False and post-norm when it is True.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True meant padding as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I called the self-attention without the mask, so padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward sub-layer before the self-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_unnormalized",
        EncPreNormKeysUnnormed,
        "mistake",
        "In pre-norm I normalized only the query; keys and values came from the raw x.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        EncDropoutAlwaysOn,
        "mistake",
        "I used F.dropout(..., p=0.1) with the paper's rate, which drops even in eval mode.",
    ),
    BlindCase(
        CHECK,
        "prenorm_final_norm_in_block",
        EncPreNormFinalNorm,
        "mistake",
        "Since pre-norm needs a final LayerNorm, I applied norm2 again at the end of the block.",
    ),
    BlindCase(
        CHECK,
        "relu_after_ffn",
        EncReluAfterFfn,
        "mistake",
        "I applied a ReLU to the feed-forward output before adding it to the residual.",
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
        "returns_weights_tuple",
        EncReturnsWeights,
        "mistake",
        "My forward returns (x, attention weights), like MultiHeadAttention.",
    ),
    BlindCase(
        CHECK,
        "postnorm_norm_inside_residual",
        EncPostNormNormInside,
        "mistake",
        "For post-norm I wrote x + norm(sublayer(x)) instead of norm(x + sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "add_norm_helper",
        EncSublayerHelper,
        "correct",
        "An _add_norm helper that takes the sub-layer as a function; keyword arguments.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout",
        EncTwoDropouts,
        "correct",
        "No dropout module: F.dropout(p, self.training) after each sub-layer.",
    ),
    BlindCase(
        CHECK,
        "expanded_mask",
        EncExpandedMask,
        "correct",
        "The padding mask expanded to (B, 1, S, S) first; explicit residual variables.",
    ),
]
