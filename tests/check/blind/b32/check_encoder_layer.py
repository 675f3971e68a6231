"""Blind set B32, check_encoder_layer (chapter 13): one encoder block, post-norm and pre-norm."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The book's layer names; subclasses write only ``forward``."""

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


class EncNoAttentionResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self.attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFeedForwardResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncNormFirstIgnored(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))  # the paper's layout
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # read the flag the wrong way round
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormOnSublayerOutput(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self.attn(x, src_mask)))  # "Add & Norm" as x + Norm(.)
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self.attn(h, src_mask))  # the residual starts from norm(x)
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormQueryUnnormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(x, h, h, mask=src_mask)[0])  # query not normed
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormExtraFinalNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # normalize the output as well
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, as in nn.Transformer
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1)
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFeedForwardFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return x + self.dropout(self.attn(self.norm1(x), src_mask))
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return self.norm1(x + self.dropout(self.attn(x, src_mask)))


class EncParallelSublayers(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            return x + self.dropout(self.attn(h, src_mask)) + self.dropout(self.feed_forward(h))
        a = self.dropout(self.attn(x, src_mask))
        f = self.dropout(self.feed_forward(x))  # both read x, then one norm
        return self.norm2(self.norm1(x + a) + f)


class EncDropoutHardCoded(_Layers):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.dropout = nn.Dropout(0.1)  # the paper's P_drop

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncTupleNotUnpacked(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncExplicit(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.feed_forward(h))
        else:
            out, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self.norm1(x + self.dropout(out))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncSublayerHelper(nn.Module):
    """A generic Add & Norm helper, one Dropout per sub-layer, extra optional arguments."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False, **unused):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _sublayer(self, x, fn, norm, drop):
        if self.norm_first:
            return x + drop(fn(norm(x)))
        return norm(x + drop(fn(x)))

    def _attend(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]

    def forward(self, x: Tensor, src_mask: Tensor | None = None, weights=None) -> Tensor:
        x = self._sublayer(x, lambda h: self._attend(h, src_mask), self.norm1, self.drop1)
        return self._sublayer(x, self.feed_forward, self.norm2, self.drop2)


class EncProjectAttend(_Layers):
    """Self-attention through project_kv and attend, the two halves of MultiHeadAttention."""

    def _attention(self, h: Tensor, mask: Tensor) -> Tensor:
        k, v = self.self_attn.project_kv(h, h)
        return self.self_attn.attend(h, k, v, mask=mask)[0]

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        steps = ((self._attention, self.norm1), (self.feed_forward, self.norm2))
        for i, (fn, norm) in enumerate(steps):
            if self.norm_first:
                h = norm(x)
                x = x + self.dropout(fn(h, src_mask) if i == 0 else fn(h))
            else:
                x = norm(x + self.dropout(fn(x, src_mask) if i == 0 else fn(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttentionResidual,
        "mistake",
        "I forgot to add x back after the self-attention.",
    ),
    BlindCase(
        CHECK,
        "no_feed_forward_residual",
        EncNoFeedForwardResidual,
        "mistake",
        "I forgot the residual connection around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncNormFirstIgnored,
        "mistake",
        "I stored norm_first but always wrote the post-norm block.",
    ),
    BlindCase(
        CHECK,
        "norm_first_inverted",
        EncNormFirstInverted,
        "mistake",
        "I wrote 'if not self.norm_first' for the pre-norm branch.",
    ),
    BlindCase(
        CHECK,
        "post_norm_on_sublayer_output",
        EncNormOnSublayerOutput,
        "mistake",
        "In post-norm I normalized the sub-layer's output before adding it, x + norm(sub(x)), "
        "instead of norm(x + sub(x)).",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_from_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I overwrote x with norm(x), so the residual adds the normalized vector.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_query_unnormed",
        EncPreNormQueryUnnormed,
        "mistake",
        "In pre-norm I normalized the keys and values but passed the raw x as the query.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_extra_final_norm",
        EncPreNormExtraFinalNorm,
        "mistake",
        "In pre-norm I also normalized the block's output with norm2, as the stack's final "
        "LayerNorm does.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True marks the padding as in nn.Transformer.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I left the mask out of the self-attention call.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the mask to (B, 1, S, 1), so it hides padded queries instead of padded keys.",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        EncFeedForwardFirst,
        "mistake",
        "I put the feed-forward network before the self-attention.",
    ),
    BlindCase(
        CHECK,
        "parallel_sublayers",
        EncParallelSublayers,
        "mistake",
        "Both sub-layers read the block's input (attention and FFN in parallel) instead of the "
        "FFN reading the attention's output.",
    ),
    BlindCase(
        CHECK,
        "dropout_hard_coded",
        EncDropoutHardCoded,
        "mistake",
        "I made the residual dropout nn.Dropout(0.1), the paper's value, ignoring the dropout "
        "argument.",
    ),
    BlindCase(
        CHECK,
        "attention_tuple_not_unpacked",
        EncTupleNotUnpacked,
        "mistake",
        "I used self.self_attn(...) as a tensor, forgetting it returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        EncExplicit,
        "correct",
        "Both modes written out step by step, no helper.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper",
        EncSublayerHelper,
        "correct",
        "A generic Add & Norm helper, a Dropout per sub-layer (no parameters), optional "
        "arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "project_attend_loop",
        EncProjectAttend,
        "correct",
        "Attention through project_kv and attend; the two sub-layers in a loop.",
    ),
]
