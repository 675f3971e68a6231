"""Blind set B28, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The layers every reader builds, with the book's names; the forward passes differ."""

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
        out, _ = self.self_attn(h, h, h, mask=mask)
        return out


# ---------------------------------------------------------------- mistakes


class EncNoAttentionResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))  # the attention replaces x
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # the paper's formula only; norm_first is stored but never looked at
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormAddsNormalized(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._attn(h, src_mask))  # the residual starts from norm(x)
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # as nn.TransformerEncoderLayer wants it
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFeedForwardFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncNormsSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self._attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncOneNormTwice(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncPreNormFinalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # a pre-norm stack ends with a LayerNorm, so the block does too
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormQueryOnly(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            out, _ = self.self_attn(h, x, x, mask=src_mask)  # keys and values from the stream
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReluAfterFFN(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(F.relu(self.feed_forward(self.norm2(x))))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(F.relu(self.feed_forward(x))))


class EncDropoutHardCoded(_Base):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.dropout = nn.Dropout(0.1)  # the paper's P_drop

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReturnsWeights(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        h = self.norm1(x) if self.norm_first else x
        out, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
        x = x + self.dropout(out) if self.norm_first else self.norm1(x + self.dropout(out))
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights  # like MultiHeadAttention: the output and the weights


class EncNoAffineNorm(_Base):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.norm1 = nn.LayerNorm(d_model, elementwise_affine=False)
        self.norm2 = nn.LayerNorm(d_model, elementwise_affine=False)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncExplicitDropouts(nn.Module):
    """Two dropout modules, one per sub-layer, and both modes written out."""

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
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            a, _ = self.self_attn(h, h, h, mask=src_mask)
            x = x + self.dropout1(a)
            x = x + self.dropout2(self.feed_forward(self.norm2(x)))
        else:
            a, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self.norm1(x + self.dropout1(a))
            x = self.norm2(x + self.dropout2(self.feed_forward(x)))
        return x


class EncSublayerLoop(nn.Module):
    """A loop over (sub-layer, norm) pairs; the mask may be omitted; an extra option."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        activation_checkpoint: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first
        self.activation_checkpoint = activation_checkpoint

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1),
            (self.feed_forward, self.norm2),
        ]
        for sublayer, norm in steps:
            if self.norm_first:
                x = x + self.drop(sublayer(norm(x)))
            else:
                x = norm(x + self.drop(sublayer(x)))
        return x


class EncProjectAttend(nn.Module):
    """Keys and values projected with project_kv, then attend; the mask expanded to every head."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _attention(self, h: Tensor, src_mask: Tensor) -> Tensor:
        B, S, _ = h.shape
        mask = src_mask.expand(B, self.num_heads, S, S)  # (B, H, S, S)
        k, v = self.self_attn.project_kv(h, h)
        out, _ = self.self_attn.attend(h, k, v, mask=mask)
        return out

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        pre = self.norm_first
        h = self.norm1(x) if pre else x
        x = x + self.dropout(self._attention(h, src_mask))
        x = x if pre else self.norm1(x)
        h = self.norm2(x) if pre else x
        x = x + self.dropout(self.feed_forward(h))
        return x if pre else self.norm2(x)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttentionResidual,
        "mistake",
        "I forgot the residual connection around the self-attention: its output replaces x.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but always wrote the paper's post-norm formula.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_adds_normalized",
        EncPreNormAddsNormalized,
        "mistake",
        "In pre-norm I set h = norm(x) and added the sub-layer to h, so the residual stream is "
        "the normalized x instead of x itself.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask to the attention, as PyTorch's own layers want True = blocked.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I called the self-attention without the mask, so the queries see the padding.",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        EncFeedForwardFirst,
        "mistake",
        "I put the feed-forward sub-layer before the self-attention.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        EncNormsSwapped,
        "mistake",
        "I used norm2 after the attention and norm1 after the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "one_norm_twice",
        EncOneNormTwice,
        "mistake",
        "I made norm1 and norm2 but used norm1 for both sub-layers; norm2 is never used.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_final_norm_in_block",
        EncPreNormFinalNorm,
        "mistake",
        "In pre-norm mode my block ends with one more LayerNorm (norm2 again), since the text "
        "says a pre-norm stack ends with one.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_query_only",
        EncPreNormQueryOnly,
        "mistake",
        "In pre-norm I normalized only the query; the keys and values came from x itself.",
    ),
    BlindCase(
        CHECK,
        "relu_after_ffn",
        EncReluAfterFFN,
        "mistake",
        "I added a ReLU to the feed-forward network's output before the residual sum.",
    ),
    BlindCase(
        CHECK,
        "dropout_hard_coded",
        EncDropoutHardCoded,
        "mistake",
        "I wrote nn.Dropout(0.1), the paper's value, instead of using the dropout argument.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_too",
        EncReturnsWeights,
        "mistake",
        "My forward returns (x, weights), like MultiHeadAttention, instead of x alone.",
    ),
    BlindCase(
        CHECK,
        "layernorm_without_affine",
        EncNoAffineNorm,
        "mistake",
        "I made the LayerNorms with elementwise_affine=False, so they have no gain and bias.",
    ),
    BlindCase(
        CHECK,
        "explicit_dropouts",
        EncExplicitDropouts,
        "correct",
        "Both modes written out in forward, one dropout module per sub-layer.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop",
        EncSublayerLoop,
        "correct",
        "A loop over (sub-layer, norm) pairs; src_mask defaults to None; an extra unused "
        "option with a default.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        EncProjectAttend,
        "correct",
        "project_kv then attend instead of calling the attention module, with the mask "
        "expanded to (B, H, S, S).",
    ),
]
