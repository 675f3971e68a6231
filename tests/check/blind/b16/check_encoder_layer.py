"""Blind set B16, check_encoder_layer (chapter 13): one encoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The book's layer names; each case below writes its own ``forward``."""

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


class EncNoAttnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))  # the attention replaces x
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(self.dropout(self._attn(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncNoFfnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
            x = self.norm2(self.dropout(self.feed_forward(x)))
        return x


class EncNormFirstIgnored(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # the paper's post-norm, whatever norm_first says
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._attn(h, src_mask))  # residual from the normalised x
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPostNormInsideBranch(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # "Add & Norm": I normalised the sub-layer's output, then added it
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # as nn.MultiheadAttention wants it: True = padding
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): I thought rows were the tokens
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncOneNormTwice(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        norm = self.norm1  # one LayerNorm is enough, it has no state
        if self.norm_first:
            x = x + self.dropout(self._attn(norm(x), src_mask))
            return x + self.dropout(self.feed_forward(norm(x)))
        x = norm(x + self.dropout(self._attn(x, src_mask)))
        return norm(x + self.dropout(self.feed_forward(x)))


class EncOwnNames(nn.Module):
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


class EncReturnsWeights(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        h = self.norm1(x) if self.norm_first else x
        out, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
        x = x + self.dropout(out) if self.norm_first else self.norm1(x + self.dropout(out))
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights  # the weights too, to plot them


# ---------------------------------------------------------------- correct variants


class EncInline(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            a, _ = self.self_attn(h, h, h, src_mask)
            x = x + self.dropout(a)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            a, _ = self.self_attn(x, x, x, src_mask)
            x = self.norm1(x + self.dropout(a))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncSublayerHelper(nn.Module):
    """A helper for Add & Norm, fused attention, an optional mask and an extra argument."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        fused_attention: bool = True,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.p = dropout
        self.norm_first = norm_first
        self.fused_attention = fused_attention

    def add_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + F.dropout(sublayer(norm(x)), self.p, self.training)
        return norm(x + F.dropout(sublayer(x), self.p, self.training))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        def attend(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h, mask=src_mask, fused=self.fused_attention)[0]

        x = self.add_norm(x, attend, self.norm1)
        return self.add_norm(x, self.feed_forward, self.norm2)


class EncProjectAttend(_Layers):
    """Attention through ``project_kv`` and ``attend``; the sub-layers kept in a list of pairs."""

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def attention(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=src_mask)[0]

        for sublayer, norm in ((attention, self.norm1), (self.feed_forward, self.norm2)):
            if self.norm_first:
                branch = sublayer(norm(x))
                x = x + self.dropout(branch)
            else:
                branch = self.dropout(sublayer(x))
                branch += x  # in place on my own temporary
                x = norm(branch)
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual connection around the self-attention: its output replaces x.",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "I added x back around the attention but not around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncNormFirstIgnored,
        "mistake",
        "I only wrote the paper's post-norm and ignored the norm_first flag.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm mode I normalised x first and then added the sub-layer to the normalised "
        "x, so the residual stream is normalised at every sub-layer.",
    ),
    BlindCase(
        CHECK,
        "postnorm_norm_inside_branch",
        EncPostNormInsideBranch,
        "mistake",
        "For post-norm I wrote x + LayerNorm(sublayer(x)) instead of LayerNorm(x + sublayer(x)).",
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
        "I passed ~src_mask, thinking True should mark the padding to block.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I called self_attn(x, x, x) and never passed src_mask, so padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed src_mask to (B, 1, S, 1), which masks padded queries instead of padded keys.",
    ),
    BlindCase(
        CHECK,
        "one_norm_used_twice",
        EncOneNormTwice,
        "mistake",
        "I made norm1 and norm2 but used norm1 for both sub-layers, so norm2 is never trained.",
    ),
    BlindCase(
        CHECK,
        "own_layer_names",
        EncOwnNames,
        "mistake",
        "I named the layers attn, ffn, ln1 and ln2 instead of self_attn, feed_forward, norm1, "
        "norm2.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_too",
        EncReturnsWeights,
        "mistake",
        "I return (x, attention weights) so that I can plot the weights.",
    ),
    BlindCase(
        CHECK,
        "inline_positional_mask",
        EncInline,
        "correct",
        "Both modes written out inline with an if, the mask passed positionally.",
    ),
    BlindCase(
        CHECK,
        "add_norm_helper_fused",
        EncSublayerHelper,
        "correct",
        "An add_norm helper method with F.dropout, fused attention (scaled_dot_product_attention) "
        "on by an extra argument, and src_mask optional.",
    ),
    BlindCase(
        CHECK,
        "project_attend_loop",
        EncProjectAttend,
        "correct",
        "Attention through project_kv and attend, the two sub-layers in a loop over "
        "(sublayer, norm) pairs, an in-place add on my own temporary, an extra_repr method.",
    ),
]
