"""Blind set B5, check_decoder_layer (chapter 13): decoder blocks as readers write them."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.masks import causal_mask
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The six layers with the book's names; subclasses write ``forward``."""

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
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecMemoryNormedToo(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            m = self.norm2(memory)  # pre-norm: normalised the memory with the same norm
            x = x + self.dropout(self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.sub(x, self.feed_forward, self.norm3)


class DecCrossSkipFromBlockInput(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x0 = x
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            c = self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0]
            x = x0 + self.dropout(c)  # residual from the block's input, not from x
        else:
            c = self.cross_attn(x, memory, memory, mask=src_mask)[0]
            x = self.norm2(x0 + self.dropout(c))
        return self.sub(x, self.feed_forward, self.norm3)


class DecFfnBeforeCross(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, self.feed_forward, self.norm2)  # feed-forward second ...
        return self.sub(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3
        )  # ... and cross-attention last


class DecOwnCausalMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        causal = causal_mask(x.shape[1], device=x.device)  # built here; tgt_mask not used
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecValuesFromDecoder(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # keys from the memory, values from the decoder: "the target's content, routed by the
        # source"
        x = self.sub(x, lambda h: self.cross_attn(h, memory, h, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecNormsShifted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3)
        return self.sub(x, self.feed_forward, self.norm1)  # norms used in the order 2, 3, 1


class DecCrossMaskedCausally(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T, S = x.shape[1], memory.shape[1]
        # "the decoder must never see ahead", so the cross-attention got a causal mask as well
        ahead = causal_mask(max(T, S), device=x.device)[:T, :S]
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask & ahead)[0], self.norm2
        )
        return self.sub(x, self.feed_forward, self.norm3)


class DecPrenormNormOnOutput(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # pre-norm with the LayerNorm on the sub-layer's output instead of its input
        if self.norm_first:
            x = x + self.dropout(self.norm1(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = x + self.dropout(self.norm2(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            return x + self.dropout(self.norm3(self.feed_forward(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecPreNormKeyword(nn.Module):
    """Right computation, but the constructor calls the flag ``pre_norm``."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        pre_norm: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.pre_norm = pre_norm

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        steps = (
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        )
        for fn, norm in steps:
            x = x + self.dropout(fn(norm(x))) if self.pre_norm else norm(x + self.dropout(fn(x)))
        return x


# ---------------------------------------------------------------- correct variants


class DecLoopOverSublayers(_Layers):
    """The three sub-layers as a list of (function, norm) pairs walked in a loop."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            if self.norm_first:
                x = x + self.dropout(fn(norm(x)))
            else:
                x = norm(x + self.dropout(fn(x)))
        return x


class DecProjectOnce(_Layers):
    """Memory projected with ``project_kv`` first; each mode written out step by step."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh)
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn.attend(h, mem_k, mem_v, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        a, _ = self.self_attn(x, x, x, mask=tgt_mask)
        x = self.norm1(x + self.dropout(a))
        c, _ = self.cross_attn.attend(x, mem_k, mem_v, mask=src_mask)
        x = self.norm2(x + self.dropout(c))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


CASES = [
    BlindCase(
        CHECK,
        "memory_normed_in_prenorm",
        DecMemoryNormedToo,
        "mistake",
        "In pre-norm I passed the encoder memory through norm2 too before the "
        "cross-attention, not only the decoder's x.",
    ),
    BlindCase(
        CHECK,
        "cross_skip_from_block_input",
        DecCrossSkipFromBlockInput,
        "mistake",
        "The cross-attention's residual adds the block's original input instead of the "
        "output of the self-attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_cross",
        DecFfnBeforeCross,
        "mistake",
        "I put the feed-forward network second and the cross-attention last.",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask",
        DecOwnCausalMask,
        "mistake",
        "I built a causal mask inside forward and ignored tgt_mask, so the target padding "
        "is never masked.",
    ),
    BlindCase(
        CHECK,
        "cross_values_from_decoder",
        DecValuesFromDecoder,
        "mistake",
        "In the cross-attention I took the keys from the memory but the values from the "
        "decoder's own x.",
    ),
    BlindCase(
        CHECK,
        "norms_in_wrong_order",
        DecNormsShifted,
        "mistake",
        "I used the LayerNorms in the order norm2, norm3, norm1 for the three sub-layers.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_causal",
        DecCrossMaskedCausally,
        "mistake",
        "I added a causal mask to the cross-attention as well, so target position t only "
        "reads source positions up to t.",
    ),
    BlindCase(
        CHECK,
        "prenorm_norm_on_output",
        DecPrenormNormOnOutput,
        "mistake",
        "For pre-norm I put each LayerNorm on the sub-layer's output, x + norm(f(x)), "
        "instead of on its input.",
    ),
    BlindCase(
        CHECK,
        "flag_named_pre_norm",
        DecPreNormKeyword,
        "mistake",
        "I named the constructor's flag pre_norm instead of norm_first.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        DecLoopOverSublayers,
        "correct",
        "The three sub-layers as (function, norm) pairs in a loop, masks optional.",
    ),
    BlindCase(
        CHECK,
        "memory_projected_once",
        DecProjectOnce,
        "correct",
        "The memory projected once with project_kv and attended with attend; each mode "
        "written out in full.",
    ),
]
