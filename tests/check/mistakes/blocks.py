"""Mistakes in the encoder and decoder blocks, post-norm and pre-norm (chapter 13)."""

from __future__ import annotations

import math

import torch
from torch import nn

from transformer_tutorial import check
from transformer_tutorial.attention import attention
from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.transformer import DecoderLayer, EncoderLayer, residual

from . import Correct, Mistake
from .attention import MultiHeadByLoop


def run_block(x, steps, norm_first):
    """The sub-layers ``steps`` (function, LayerNorm) in order, each with its residual."""
    for sublayer, norm in steps:
        x = residual(x, sublayer, norm, nn.Identity(), norm_first)
    return x


def attend(mha, mask, memory=None):
    """A sub-layer: ``mha`` attends from its input to ``memory`` (to itself if ``None``)."""
    return lambda h: mha(h, *[h if memory is None else memory] * 2, mask=mask)[0]


def encoder_sublayers(m, mask):
    return [(attend(m.self_attn, mask), m.norm1), (m.feed_forward, m.norm2)]


# --- the encoder block ------------------------------------------------------------------------------


class EncoderByHand(nn.Module):
    """Correct, written differently: heads one at a time, the two cases written out."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadByLoop(d_model, num_heads)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.norm_first = norm_first

    def forward(self, x, src_mask):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.self_attn(h, h, h, src_mask)
            return x + self.feed_forward(self.norm2(x))
        x = self.norm1(x + self.self_attn(x, x, x, src_mask))
        return self.norm2(x + self.feed_forward(x))


class HeadsConcatenatedWithoutOutProj(MultiHeadByLoop):
    """The loop of heads, whose concatenation is returned without out_proj."""

    def forward(self, query, key, value, mask=None):
        heads = []
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        for h in range(self.h):
            cols = slice(h * self.dh, (h + 1) * self.dh)
            m = None if mask is None else mask[:, 0]  # (B, T_q or 1, T_k)
            heads.append(attention(q[..., cols], k[..., cols], v[..., cols], mask=m)[0])
        return torch.cat(heads, dim=-1)  # out_proj forgotten


class EncoderWithOwnHeads(EncoderByHand):
    """The block assembled right around an attention class of its own that is wrong inside."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.self_attn = HeadsConcatenatedWithoutOutProj(d_model, num_heads)


def encoder_with(body):
    class Layer(EncoderLayer):
        def forward(self, x, src_mask=None):
            return body(self, x, src_mask)

    return Layer


def encoder_normed_residual(m, x, mask):
    for sublayer, norm in encoder_sublayers(m, mask):
        if m.norm_first:
            x = norm(x)
            x = x + sublayer(x)
        else:
            x = norm(x + sublayer(x))
    return x


def encoder_norm_on_sublayer(m, x, mask):
    for sublayer, norm in encoder_sublayers(m, mask):
        x = x + norm(sublayer(x))
    return x


def encoder_stale_residual(m, x, mask):
    if m.norm_first:
        h = x + m.self_attn(m.norm1(x), m.norm1(x), m.norm1(x), mask)[0]
        return x + m.feed_forward(m.norm2(h))
    h = m.norm1(x + m.self_attn(x, x, x, mask)[0])
    return m.norm2(x + m.feed_forward(h))


def encoder_stale_input(m, x, mask):
    if m.norm_first:
        h = x + m.self_attn(m.norm1(x), m.norm1(x), m.norm1(x), mask)[0]
        return h + m.feed_forward(m.norm2(x))
    h = m.norm1(x + m.self_attn(x, x, x, mask)[0])
    return m.norm2(h + m.feed_forward(x))


def encoder_detached_attention(m, x, mask):
    steps = [(lambda h: attend(m.self_attn, mask)(h).detach(), m.norm1), (m.feed_forward, m.norm2)]
    return run_block(x, steps, m.norm_first)


class EncoderWithoutMaskArgument(EncoderLayer):
    def forward(self, x):
        return super().forward(x, None)


# --- the decoder block ------------------------------------------------------------------------------


class DecoderByHand(nn.Module):
    """Correct, written differently: heads one at a time, a loop over the three sub-layers."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadByLoop(d_model, num_heads)
        self.cross_attn = MultiHeadByLoop(d_model, num_heads)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask, src_mask):
        sublayers = [
            (lambda h: self.self_attn(h, h, h, tgt_mask), self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, src_mask), self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for sublayer, norm in sublayers:
            x = x + sublayer(norm(x)) if self.norm_first else norm(x + sublayer(x))
        return x


def decoder_with(sublayers):
    """The book's decoder block running the (function, LayerNorm) pairs that
    ``sublayers(m, memory, tgt_mask, src_mask)`` returns."""

    class Layer(DecoderLayer):
        def forward(self, x, memory, tgt_mask=None, src_mask=None, cache=None, weights=None):
            return run_block(x, sublayers(self, memory, tgt_mask, src_mask), self.norm_first)

    return Layer


def decoder_sublayers(m, memory, tgt_mask, src_mask):
    return [
        (attend(m.self_attn, tgt_mask), m.norm1),
        (attend(m.cross_attn, src_mask, memory), m.norm2),
        (m.feed_forward, m.norm3),
    ]


def naive_attention(mha, blocked):
    """Attention that fills the *blocked* keys with -inf (the opposite polarity) and has no NaN
    guard: a query that may see no key gets NaN."""

    def sublayer(h, kv=None):
        kv = h if kv is None else kv
        B, T, D = h.shape
        split = lambda x: x.view(B, x.shape[1], mha.num_heads, -1).transpose(1, 2)  # noqa: E731
        q, k, v = split(mha.q_proj(h)), split(mha.k_proj(kv)), split(mha.v_proj(kv))
        scores = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(blocked, -math.inf)
        return mha.out_proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D))

    return sublayer


def decoder_flipped_naively(m, mem, tgt, src):
    cross = naive_attention(m.cross_attn, src)
    return [
        (naive_attention(m.self_attn, tgt), m.norm1),
        (lambda h: cross(h, mem), m.norm2),
        (m.feed_forward, m.norm3),
    ]


def decoder_cross_through_self(m, mem, tgt, src):
    return [
        (attend(m.self_attn, tgt), m.norm1),
        (attend(m.self_attn, src, mem), m.norm2),
        (m.feed_forward, m.norm3),
    ]


def decoder_queries_from_memory(m, mem, tgt, src):
    return [
        (attend(m.self_attn, tgt), m.norm1),
        (lambda h: m.cross_attn(mem, h, h, mask=src)[0], m.norm2),
        (m.feed_forward, m.norm3),
    ]


def encoder_no_residual(m, x, mask):
    """No residual around either sub-layer: LayerNorm(Sublayer(x)), or Sublayer(LayerNorm(x))."""
    for sublayer, norm in encoder_sublayers(m, mask):
        x = sublayer(norm(x)) if m.norm_first else norm(sublayer(x))
    return x


def encoder_no_residual_around_attention(m, x, mask):
    (attention, norm1), rest = encoder_sublayers(m, mask)
    x = attention(norm1(x)) if m.norm_first else norm1(attention(x))
    return run_block(x, [rest], m.norm_first)


def encoder_one_norm_twice(m, x, mask):
    (attention, _), (ffn, _) = encoder_sublayers(m, mask)
    return run_block(x, [(attention, m.norm1), (ffn, m.norm1)], m.norm_first)


class DecoderCrossReadsBlockInput(DecoderLayer):
    """Cross-attention reads the block's input x, not self-attention's output."""

    def forward(self, x, memory, tgt_mask=None, src_mask=None, cache=None, weights=None):
        block_input = x
        x = residual(
            x, attend(self.self_attn, tgt_mask), self.norm1, nn.Identity(), self.norm_first
        )
        cross = attend(self.cross_attn, src_mask, memory)
        if self.norm_first:
            x = x + cross(self.norm2(block_input))
        else:
            x = self.norm2(x + cross(block_input))
        return residual(x, self.feed_forward, self.norm3, nn.Identity(), self.norm_first)


def decoder_memory_only_shifts(m, mem, tgt, src):
    """Cross-attention's keys and values are the decoder's own positions' average: the memory
    is never read."""
    return [
        (attend(m.self_attn, tgt), m.norm1),
        (lambda h: m.cross_attn(h, h.mean(1, keepdim=True), h.mean(1, keepdim=True))[0], m.norm2),
        (m.feed_forward, m.norm3),
    ]


def decoder_memory_normalised(m, mem, tgt, src):
    memory = m.norm2(mem) if m.norm_first else mem
    return decoder_sublayers(m, memory, tgt, src)


ENC, DEC = check.check_encoder_layer, check.check_decoder_layer

MISTAKES = [
    Mistake(ENC, "block-part-inside", EncoderWithOwnHeads, "the difference is inside it"),
    Mistake(
        ENC,
        "block-no-residual",
        encoder_with(encoder_no_residual),
        "residual connection is missing",
    ),  # fmt: skip
    Mistake(
        ENC,
        "block-norm-first-ignored",
        encoder_with(lambda m, x, mask: run_block(x, encoder_sublayers(m, mask), True)),
        "norm_first=False asks for post-norm",
    ),  # fmt: skip
    Mistake(
        ENC,
        "encoder-always-post-norm",
        encoder_with(lambda m, x, mask: run_block(x, encoder_sublayers(m, mask), False)),
        "norm_first=True asks for pre-norm",
        mistake="block-norm-first-ignored",
    ),  # fmt: skip
    Mistake(
        ENC,
        "encoder-no-padding-mask",
        encoder_with(lambda m, x, mask: EncoderLayer.forward(m, x, None)),
        "the padding is not hidden",
    ),  # fmt: skip
    Mistake(
        ENC,
        "block-mask-polarity",
        encoder_with(lambda m, x, mask: EncoderLayer.forward(m, x, ~mask)),
        "mask polarity",
    ),
    Mistake(
        ENC,
        "block-order",
        encoder_with(
            lambda m, x, mask: run_block(x, encoder_sublayers(m, mask)[::-1], m.norm_first)
        ),
        "yours runs the feed-forward network, then self-attention",
    ),  # fmt: skip
    Mistake(
        ENC,
        "block-normed-residual",
        encoder_with(encoder_normed_residual),
        "the residual adds the normalised input",
    ),  # fmt: skip
    Mistake(
        ENC,
        "block-norm-on-sublayer",
        encoder_with(encoder_norm_on_sublayer),
        "x + LayerNorm(Sublayer(x))",
    ),  # fmt: skip
    Mistake(
        ENC,
        "block-stale-residual",
        encoder_with(encoder_stale_residual),
        "each residual adds the block's input",
    ),  # fmt: skip
    Mistake(
        ENC,
        "block-stale-input",
        encoder_with(encoder_stale_input),
        "each sub-layer reads the block's input",
    ),  # fmt: skip
    Mistake(
        ENC,
        "encoder-detached-attention",
        encoder_with(encoder_detached_attention),
        "the gradient with respect to x differs",
    ),  # fmt: skip
    Mistake(ENC, "encoder-instance", EncoderLayer(16, 4, 32), "pass `EncoderLayer`"),
    Mistake(
        ENC,
        "encoder-forward-without-mask",
        EncoderWithoutMaskArgument,
        "calls your module as `layer(x, src_mask)`",
    ),  # fmt: skip
    Mistake(
        DEC,
        "decoder-sees-future",
        decoder_with(lambda m, mem, tgt, src: decoder_sublayers(m, mem, None, src)),
        "sees the future",
    ),  # fmt: skip
    Mistake(
        DEC,
        "decoder-cross-reads-target",
        decoder_with(
            lambda m, mem, tgt, src: [
                (attend(m.self_attn, tgt), m.norm1),
                (attend(m.cross_attn, tgt), m.norm2),
                (m.feed_forward, m.norm3),
            ]
        ),
        "keys and values from its own input",
    ),  # fmt: skip
    Mistake(
        DEC,
        "decoder-cross-on-self-src-mask",
        decoder_with(
            lambda m, mem, tgt, src: [
                (attend(m.self_attn, tgt), m.norm1),
                (attend(m.cross_attn, src), m.norm2),
                (m.feed_forward, m.norm3),
            ]
        ),
        "keys and values from memory",
    ),  # fmt: skip
    Mistake(
        DEC,
        "decoder-no-source-mask",
        decoder_with(lambda m, mem, tgt, src: decoder_sublayers(m, mem, tgt, None)),
        "the source padding is not hidden",
    ),  # fmt: skip
    Mistake(
        DEC,
        "decoder-order",
        decoder_with(
            lambda m, mem, tgt, src: [decoder_sublayers(m, mem, tgt, src)[i] for i in (1, 0, 2)]
        ),
        "yours runs cross-attention, then self-attention",
        mistake="block-order",
    ),  # fmt: skip
    Mistake(
        DEC,
        "decoder-flip",
        decoder_with(lambda m, mem, tgt, src: decoder_sublayers(m, mem, ~tgt, ~src)),
        "you masked the keys that may be seen",
        mistake="block-mask-polarity",
    ),  # fmt: skip
    Mistake(
        DEC,
        "decoder-flip-with-nan",
        decoder_with(decoder_flipped_naively),
        "mask polarity",
        mistake="block-mask-polarity",
    ),
    Mistake(
        ENC,
        "block-no-residual-around",
        encoder_with(encoder_no_residual_around_attention),
        "there is no residual connection around self-attention",
    ),
    Mistake(
        ENC,
        "block-norm-first-inverted",
        encoder_with(lambda m, x, mask: run_block(x, encoder_sublayers(m, mask), not m.norm_first)),
        "norm_first=False asks for post-norm",
    ),
    Mistake(
        DEC,
        "block-reads-block-input",
        DecoderCrossReadsBlockInput,
        "cross-attention reads the block's input x, not the output of self-attention",
    ),
    Mistake(
        ENC,
        "block-norm-reused",
        encoder_with(encoder_one_norm_twice),
        "the feed-forward network is normalised by norm1",
    ),
    Mistake(
        DEC,
        "decoder-ignores-memory",
        decoder_with(decoder_memory_only_shifts),
        "the output does not depend on memory",
    ),
    Mistake(
        DEC,
        "decoder-memory-normalised",
        decoder_with(decoder_memory_normalised),
        "you normalise the memory too",
    ),
    Mistake(
        DEC,
        "decoder-cross-through-self-attn",
        decoder_with(decoder_cross_through_self),
        "runs through self_attn's weights",
    ),  # fmt: skip
    Mistake(
        DEC,
        "decoder-queries-from-memory",
        decoder_with(decoder_queries_from_memory),
        "takes its queries from x",
    ),  # fmt: skip
]

CORRECT = [
    Correct(ENC, "encoder-package", EncoderLayer),
    Correct(ENC, "encoder-by-hand", EncoderByHand),
    Correct(DEC, "decoder-package", DecoderLayer),
    Correct(DEC, "decoder-by-hand", DecoderByHand),
    Correct(DEC, "decoder-steps", decoder_with(decoder_sublayers)),
]
