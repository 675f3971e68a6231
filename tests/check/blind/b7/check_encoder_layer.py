"""Blind set B7, check_encoder_layer (chapter 13): one encoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The book's layer names; each case below writes its own forward."""

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


class EncNoAttentionResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self._attn(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPostNormOnSublayer(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # nn.MultiheadAttention's key_padding_mask: True = padding
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskNotPassed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOverQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1)
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFeedForwardFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncAlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormQueryNotNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(x, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnResidualFromInput(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(h)))
        h = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(h)))


class EncOneNormTwice(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncExplicitBranches(nn.Module):
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
        drop = lambda t: F.dropout(t, self.p, self.training)  # noqa: E731
        if self.norm_first:
            h = self.norm1(x)
            out, _ = self.self_attn(h, h, h, mask=src_mask)
            x = x + drop(out)
            x = x + drop(self.feed_forward(self.norm2(x)))
        else:
            out, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self.norm1(x + drop(out))
            x = self.norm2(x + drop(self.feed_forward(x)))
        return x


class EncSublayerHelper(_Layers):
    """A helper that does Add & Norm for any sub-layer, and an optional ``return_weights``."""

    def _sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor, return_weights: bool = False):
        kept = []

        def attend(h: Tensor) -> Tensor:
            out, w = self.self_attn(h, h, h, mask=src_mask.bool(), need_weights=True)
            kept.append(w)
            return out

        x = self._sublayer(x, attend, self.norm1)
        x = self._sublayer(x, self.feed_forward, self.norm2)
        return (x, kept[0]) if return_weights else x


class EncCloneInPlace(_Layers):
    """In-place additions on fresh clones, never on the caller's tensor nor on a tensor that
    autograd saved; the mask reshaped to (B, 1, 1, S)."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.reshape(x.shape[0], 1, 1, x.shape[1])
        if self.norm_first:
            delta = self.dropout(self._attn(self.norm1(x), mask))
            out = x.clone()
            out += delta
            delta = self.dropout(self.feed_forward(self.norm2(out)))
            res = out.clone()
            res += delta
            return res
        out = x.clone()
        out += self.dropout(self._attn(x, mask))
        out = self.norm1(out)
        res = out.clone()
        res += self.dropout(self.feed_forward(out))
        return self.norm2(res)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttentionResidual,
        "mistake",
        "I forgot the residual connection around self-attention: the first sub-layer is "
        "norm1(dropout(attn(x))) (pre-norm: dropout(attn(norm1(x)))) without adding x.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed_x",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I overwrote x with norm(x) first, so the residual adds the normalized "
        "input, not the raw residual stream (post-norm is right).",
    ),
    BlindCase(
        CHECK,
        "postnorm_norm_on_sublayer_only",
        EncPostNormOnSublayer,
        "mistake",
        "In post-norm I wrote x + norm(sublayer(x)): the LayerNorm normalizes only the "
        "sub-layer's output, not the sum (pre-norm is right).",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask to the attention, thinking True means padding as in "
        "nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskNotPassed,
        "mistake",
        "I called self_attn(x, x, x) without mask=src_mask, so padding keys are attended to.",
    ),
    BlindCase(
        CHECK,
        "mask_over_queries",
        EncMaskOverQueries,
        "mistake",
        "I transposed the mask to (B, 1, S, 1), so it masks the padded queries' rows instead "
        "of the padded keys.",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        EncFeedForwardFirst,
        "mistake",
        "I put the feed-forward sub-layer first and self-attention second.",
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
        "prenorm_query_not_normed",
        EncPreNormQueryNotNormed,
        "mistake",
        "In pre-norm I passed the raw x as the query and only the keys and values normalized: "
        "self_attn(x, h, h) with h = norm1(x).",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_block_input",
        EncFfnResidualFromInput,
        "mistake",
        "The second residual adds the block's input x instead of the output of the attention "
        "sub-layer (I kept the attention result in another variable).",
    ),
    BlindCase(
        CHECK,
        "norm1_used_twice",
        EncOneNormTwice,
        "mistake",
        "I created norm2 but used norm1 for both sub-layers (copy-paste), so the two "
        "LayerNorms share their gain and bias.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches_functional_dropout",
        EncExplicitBranches,
        "correct",
        "Both norm placements written out in an if/else, dropout as F.dropout with "
        "self.training instead of an nn.Dropout module.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper_with_weights",
        EncSublayerHelper,
        "correct",
        "A generic Add & Norm helper for each sub-layer; an extra return_weights argument "
        "(default False) that also returns the attention weights.",
    ),
    BlindCase(
        CHECK,
        "clone_then_inplace",
        EncCloneInPlace,
        "correct",
        "Residual additions written as += on a clone of x (never on the input), mask reshaped "
        "explicitly to (B, 1, 1, S).",
    ),
]
