"""Blind set B32, check_decoder_layer (chapter 13): one decoder block, post-norm and pre-norm."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


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
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def sub(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        """The right Add & Norm."""
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def ffn(self, x: Tensor) -> Tensor:
        return self.sub(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- mistakes


class DecNoCausalMask(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # no mask needed
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.ffn(x)


class DecCausalTransposed(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        mask = tgt_mask.transpose(-1, -2)  # (B, 1, T, T) "keys first"
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.ffn(x)


class DecSelfMaskInverted(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.ffn(x)


class DecCrossReadsX(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.ffn(x)


class DecCrossNoMask(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self.ffn(x)


class DecCrossMaskInverted(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=~src_mask)[0], self.norm2)
        return self.ffn(x)


class DecCrossQueryFromMemory(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(memory, h, h)[0], self.norm2)  # Q from memory
        return self.ffn(x)


class DecCrossFirst(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.ffn(x)


class DecNoCrossResidual(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.ffn(x)


class DecPreNormMemoryNormed(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            m = self.norm2(memory)  # pre-norm: every input of the sub-layer is normalized
            x = x + self.dropout(self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.ffn(x)


class DecNormFirstIgnored(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecFeedForwardStaleInput(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x1 = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        self.sub(x1, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.ffn(x1)  # the cross-attention's result is never used


class DecPreNormResidualFromNormed(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        if not self.norm_first:
            x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
            x = self.sub(
                x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
            )
            return self.ffn(x)
        x = self.norm1(x)
        x = x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0])
        x = self.norm2(x)
        x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        x = self.norm3(x)
        return x + self.dropout(self.feed_forward(x))


class DecSelfAttentionWithCrossWeights(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        x = self.sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm1)  # slip
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.ffn(x)


class DecPostNormBeforeAdd(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        if self.norm_first:
            x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
            x = self.sub(
                x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
            )
            return self.ffn(x)
        x = x + self.norm1(self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = x + self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return x + self.norm3(self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class DecExplicit(_Layers):
    def forward(self, x, memory, tgt_mask, src_mask):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            x = x + self.dropout(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            x = self.norm3(x + self.dropout(self.feed_forward(x)))
        return x


class DecProjectAttend(_Layers):
    """Keys and values projected first (project_kv), then attend; extra optional cache."""

    def forward(self, x, memory, tgt_mask=None, src_mask=None, cache=None):
        def self_block(h):
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_block(h):
            k, v = self.cross_attn.project_kv(memory, memory)
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        x = self.sub(x, self_block, self.norm1)
        x = self.sub(x, cross_block, self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecDropoutPerSublayer(nn.Module):
    """Three Dropout modules, a list of (function, norm) pairs walked in order."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drops = nn.ModuleList(nn.Dropout(dropout) for _ in range(3))
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask, src_mask):
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for (fn, norm), drop in zip(steps, self.drops, strict=True):
            x = x + drop(fn(norm(x))) if self.norm_first else norm(x + drop(fn(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_causal_mask",
        DecNoCausalMask,
        "mistake",
        "I called the decoder's self-attention without tgt_mask, so it sees the future.",
    ),
    BlindCase(
        CHECK,
        "causal_mask_transposed",
        DecCausalTransposed,
        "mistake",
        "I transposed tgt_mask's last two axes, so each position sees the later ones.",
    ),
    BlindCase(
        CHECK,
        "self_mask_inverted",
        DecSelfMaskInverted,
        "mistake",
        "I passed ~tgt_mask to the self-attention (True = blocked).",
    ),
    BlindCase(
        CHECK,
        "cross_reads_x",
        DecCrossReadsX,
        "mistake",
        "The cross-attention takes its keys and values from x instead of the memory.",
    ),
    BlindCase(
        CHECK,
        "cross_no_mask",
        DecCrossNoMask,
        "mistake",
        "I forgot src_mask in the cross-attention, so padded source positions are read.",
    ),
    BlindCase(
        CHECK,
        "cross_mask_inverted",
        DecCrossMaskInverted,
        "mistake",
        "I passed ~src_mask to the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecCrossQueryFromMemory,
        "mistake",
        "I called cross_attn(memory, x, x): queries from the encoder, keys and values from the "
        "decoder.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossFirst,
        "mistake",
        "I put the cross-attention before the masked self-attention.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I forgot to add x back after the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_memory_normed",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        DecNormFirstIgnored,
        "mistake",
        "I always wrote the post-norm block, whatever norm_first says.",
    ),
    BlindCase(
        CHECK,
        "ffn_reads_stale_input",
        DecFeedForwardStaleInput,
        "mistake",
        "A variable slip: the feed-forward network reads the self-attention's output, and the "
        "cross-attention's result is thrown away.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_from_normed",
        DecPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I wrote x = norm(x) before each sub-layer, so the residual adds the "
        "normalized vector.",
    ),
    BlindCase(
        CHECK,
        "self_attention_uses_cross_weights",
        DecSelfAttentionWithCrossWeights,
        "mistake",
        "A copy-paste slip: the masked self-attention calls self.cross_attn, so self_attn's "
        "weights are never used.",
    ),
    BlindCase(
        CHECK,
        "post_norm_before_add",
        DecPostNormBeforeAdd,
        "mistake",
        "In post-norm I wrote x + norm(sublayer(x)) instead of norm(x + sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicit,
        "correct",
        "Both modes written out step by step.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        DecProjectAttend,
        "correct",
        "Keys and values projected with project_kv, then attend; masks and an unused cache as "
        "optional arguments.",
    ),
    BlindCase(
        CHECK,
        "dropout_per_sublayer",
        DecDropoutPerSublayer,
        "correct",
        "A Dropout per sub-layer in a ModuleList (no parameters) and a loop over the three "
        "(function, norm) pairs.",
    ),
]
