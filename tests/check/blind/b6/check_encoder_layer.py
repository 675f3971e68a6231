"""Blind set B6, check_encoder_layer (chapter 13): encoder blocks as readers write them."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The four layers of the exercise with the book's names, built the same way every time."""

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

    def attn(self, h: Tensor, mask: Tensor) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class NoResidualOnAttention(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self.attn(self.norm1(x), src_mask))  # the "x +" got lost
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class PreNormOverwritesX(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)  # x itself replaced by its normalised version
            x = x + self.dropout(self.attn(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class NormFirstIgnored(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # always the paper's post-norm; norm_first is stored but never read
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class PytorchMaskPolarity(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # as for nn.MultiheadAttention: True = padding
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class MaskNotPassed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class FeedForwardFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self.attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self.attn(x, src_mask)))


class NormsSwapped(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        first, second = self.norm2, self.norm1  # numbered from the top of the figure
        if self.norm_first:
            x = x + self.dropout(self.attn(first(x), src_mask))
            return x + self.dropout(self.feed_forward(second(x)))
        x = first(x + self.dropout(self.attn(x, src_mask)))
        return second(x + self.dropout(self.feed_forward(x)))


class OneSharedNorm(_Layers):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.norm2 = self.norm1  # "a LayerNorm has no state, one is enough"

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class PreNormFinalNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # the stack's final LayerNorm, put inside every block
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class TorchMultiheadAttention(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, num_heads, dropout, batch_first=True)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _sa(self, h: Tensor, src_mask: Tensor) -> Tensor:
        padding = ~src_mask[:, 0, 0, :]  # (B, S), True = padding, as PyTorch wants it
        return self.self_attn(h, h, h, key_padding_mask=padding, need_weights=False)[0]

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class TwoBranches(nn.Module):
    """Pre-norm and post-norm written out as two separate code paths."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            a, _ = self.self_attn(h, h, h, mask=src_mask)
            x = x + self.drop1(a)
            f = self.feed_forward(self.norm2(x))
            return x + self.drop2(f)
        a, _ = self.self_attn(x, x, x, mask=src_mask)
        x = self.norm1(x + self.drop1(a))
        f = self.feed_forward(x)
        return self.norm2(x + self.drop2(f))


class SublayerHelper(nn.Module):
    """One generic sub-layer method; attention through project_kv and attend."""

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
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def _sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def _attend(self, h: Tensor, mask: Tensor) -> Tensor:
        k, v = self.self_attn.project_kv(h, h)
        return self.self_attn.attend(h, k, v, mask=mask)[0]

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        x = self._sublayer(x, lambda h: self._attend(h, src_mask), self.norm1)
        return self._sublayer(x, self.feed_forward, self.norm2)


class MaskReshaped(_Layers):
    """The (B, 1, 1, S) mask turned into a (B, 1, S, S) query-by-key mask first."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        full = src_mask.expand(-1, -1, S, -1)  # (B, 1, S, S): every query sees the same keys
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), full))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, full)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


CASES = [
    BlindCase(
        CHECK,
        "no_residual_on_attention",
        NoResidualOnAttention,
        "mistake",
        "I forgot the residual connection around self-attention: the first sub-layer is "
        "norm1(dropout(attn(x))) (pre-norm: dropout(attn(norm1(x)))) without adding x.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_overwrites_x",
        PreNormOverwritesX,
        "mistake",
        "In pre-norm I wrote x = norm1(x) and then x = x + attn(x), so the residual adds the "
        "normalised x instead of the raw stream (same for the feed-forward sub-layer).",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        NormFirstIgnored,
        "mistake",
        "I store norm_first but never use it: the block is always post-norm.",
    ),
    BlindCase(
        CHECK,
        "pytorch_mask_polarity",
        PytorchMaskPolarity,
        "mistake",
        "I inverted the padding mask (~src_mask) as nn.MultiheadAttention wants it, but the "
        "book's MultiHeadAttention takes True = may attend, so only padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        MaskNotPassed,
        "mistake",
        "I called self_attn(x, x, x) without the mask, so the queries attend to padding.",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        FeedForwardFirst,
        "mistake",
        "I put the feed-forward sub-layer before self-attention.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        NormsSwapped,
        "mistake",
        "I used norm2 for the attention sub-layer and norm1 for the feed-forward one.",
    ),
    BlindCase(
        CHECK,
        "one_shared_norm",
        OneSharedNorm,
        "mistake",
        "I made norm2 the same LayerNorm object as norm1, so both sub-layers share one set of "
        "LayerNorm weights.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_final_norm",
        PreNormFinalNorm,
        "mistake",
        "In pre-norm mode I apply norm2 once more to the block's output, as if every block "
        "needed the final LayerNorm of the stack.",
    ),
    BlindCase(
        CHECK,
        "torch_multihead_attention",
        TorchMultiheadAttention,
        "mistake",
        "I used torch's nn.MultiheadAttention (batch_first, key_padding_mask = ~mask) for "
        "self_attn instead of the book's MultiHeadAttention, so its weights have other names.",
    ),
    BlindCase(
        CHECK,
        "two_branches",
        TwoBranches,
        "correct",
        "Pre-norm and post-norm written as two separate code paths, with a dropout layer per "
        "sub-layer.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        SublayerHelper,
        "correct",
        "A generic _sublayer(x, fn, norm) method; attention called through project_kv and "
        "attend; src_mask defaults to None.",
    ),
    BlindCase(
        CHECK,
        "mask_expanded",
        MaskReshaped,
        "correct",
        "I expand the (B, 1, 1, S) padding mask to a (B, 1, S, S) mask before attention.",
    ),
]
