"""Blind cases for check_encoder_layer (chapter 13), written from the chapter's text only."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The layers every answer builds the same way; each case writes its own ``forward``."""

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

    def attn(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class NoResidualAroundAttention(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self.attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class AlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class PreNormResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self.attn(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class MaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # nn.MultiheadAttention's key_padding_mask: True = padding
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


class MaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): I thought the rows were the padding
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, mask)))
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
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self.attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class FunctionalDropoutAlwaysOn(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # F.dropout's default is training=True: it drops also in eval mode
        if self.norm_first:
            x = x + F.dropout(self.attn(self.norm1(x), src_mask), 0.1)
            return x + F.dropout(self.feed_forward(self.norm2(x)), 0.1)
        x = self.norm1(x + F.dropout(self.attn(x, src_mask), 0.1))
        return self.norm2(x + F.dropout(self.feed_forward(x), 0.1))


class PreNormEndsWithNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # the block's output normalized, as in post-norm
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class ReturnsOutputAndWeights(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        h = self.norm1(x) if self.norm_first else x
        out, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
        if self.norm_first:
            x = x + self.dropout(out)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(out))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights  # like MultiHeadAttention: the output and the weights


# ---------------------------------------------------------------- correct variants


class ExplicitBranches(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.feed_forward(h))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class SublayerHelper(_Layers):
    def sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor | None = None, weights=None) -> Tensor:
        x = self.sublayer(x, lambda h: self.attn(h, src_mask), self.norm1)
        return self.sublayer(x, self.feed_forward, self.norm2)


class ProjectThenAttend(nn.Module):
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
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        for norm, kind in ((self.norm1, "attn"), (self.norm2, "ffn")):
            h = norm(x) if self.norm_first else x
            if kind == "attn":
                k, v = self.self_attn.project_kv(h, h)
                out, _ = self.self_attn.attend(h, k, v, mask=src_mask)
            else:
                out = self.feed_forward(h)
            x = x + self.drop(out)
            if not self.norm_first:
                x = norm(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_residual_around_attention",
        NoResidualAroundAttention,
        "mistake",
        "I forgot the residual connection around self-attention: the attention output goes "
        "into the norm (or on to the FFN) without adding x back",
    ),
    BlindCase(
        CHECK,
        "always_post_norm",
        AlwaysPostNorm,
        "mistake",
        "I stored norm_first but never used it: the block is always the paper's post-norm, "
        "also when pre-norm is asked for",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_from_normed",
        PreNormResidualFromNormed,
        "mistake",
        "in pre-norm I overwrote x with norm(x) first, so the residual adds to the normalized "
        "x instead of the raw residual stream",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        MaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True means padding as in nn.MultiheadAttention: the "
        "mask has the opposite polarity",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        MaskNotPassed,
        "mistake",
        "I called self_attn(x, x, x) without mask=src_mask, so padding tokens are attended to",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        MaskOnQueries,
        "mistake",
        "I transposed the padding mask to (B, 1, S, 1), so it masks padded queries (rows) "
        "instead of padded keys",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        FeedForwardFirst,
        "mistake",
        "I put the feed-forward sub-layer before self-attention: the sub-layers are in the "
        "wrong order",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        NormsSwapped,
        "mistake",
        "I used norm2 around self-attention and norm1 around the feed-forward network",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_always_on",
        FunctionalDropoutAlwaysOn,
        "mistake",
        "I wrote F.dropout(out, 0.1) on the sub-layer outputs: a fixed rate, ignoring the "
        "dropout argument, and active even in eval mode",
    ),
    BlindCase(
        CHECK,
        "pre_norm_ends_with_norm",
        PreNormEndsWithNorm,
        "mistake",
        "in pre-norm I applied norm2 once more to the block's output, so the pre-norm block "
        "ends with a LayerNorm (the stack's final norm put inside every block)",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_weights",
        ReturnsOutputAndWeights,
        "mistake",
        "my forward returns a pair (output, attention weights) like MultiHeadAttention, "
        "instead of only the (B, S, D) output",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        ExplicitBranches,
        "correct",
        "the two modes written out as an if/else, without a helper",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        SublayerHelper,
        "correct",
        "a sublayer() method like the book's residual; src_mask defaults to None and forward "
        "takes an extra unused weights=None",
    ),
    BlindCase(
        CHECK,
        "project_then_attend",
        ProjectThenAttend,
        "correct",
        "a loop over the two sub-layers, attention through project_kv and attend, layers "
        "created in another order and the dropout module named drop",
    ),
]
