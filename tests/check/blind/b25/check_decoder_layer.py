"""Blind set B25, check_decoder_layer (chapter 13): one decoder block (masked self-attention,
cross-attention, feed-forward, each with Add & Norm) as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The book's layer names, built as the "Your turn" cell asks; ``forward`` differs."""

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

    def _sub(self, x: Tensor, f, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(f(norm(x)))
        return norm(x + self.dropout(f(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsTarget(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossQueryFromMemory(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(memory, h, h, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoTargetMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecOwnCausalMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))  # no peeking
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecTargetMaskTransposed(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mask = tgt_mask.transpose(-2, -1)  # (B, 1, T, T) as (keys, queries)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoSourceMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecMemoryNormalized(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        h, mem = self.norm2(x), self.norm2(memory)  # normalise both inputs of the sub-layer
        x = x + self.dropout(self.cross_attn(h, mem, mem, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecSelfAttnTwice(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecTargetMaskInverted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNormsShifted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3)
        return self._sub(x, self.feed_forward, self.norm2)


class DecPrenormNoResidualStream(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        x = self.norm1(x)
        x = x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0])
        x = self.norm2(x)
        x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        x = self.norm3(x)
        return x + self.dropout(self.feed_forward(x))


class DecMasksSwapped(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecExplicit(nn.Module):
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

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
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


class DecModuleListLoop(nn.Module):
    """The three sub-layers in a loop over (kind, norm) pairs; optional masks."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        fused_attention: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        for i in (1, 2, 3):
            setattr(self, f"norm{i}", nn.LayerNorm(d_model))
        self.p = dropout
        self.norm_first = norm_first
        self.fused = fused_attention

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask, fused=self.fused)[0], self.norm1),
            (
                lambda h: self.cross_attn(h, memory, memory, mask=src_mask, fused=self.fused)[0],
                self.norm2,
            ),
            (self.feed_forward, self.norm3),
        ]
        for sublayer, norm in steps:
            if self.norm_first:
                x = x + F.dropout(sublayer(norm(x)), self.p, self.training)
            else:
                x = norm(x + F.dropout(sublayer(x), self.p, self.training))
        return x


class DecProjectKvOnce(nn.Module):
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
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.norm3 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh)
        # expand the padding mask to every query: (B, 1, T, S)
        cross_mask = src_mask.expand(-1, -1, x.shape[1], -1)
        pre = self.norm_first
        h = self.norm1(x) if pre else x
        k, v = self.self_attn.project_kv(h, h)
        y = x + self.dropout(self.self_attn.attend(h, k, v, mask=tgt_mask)[0])
        x = y if pre else self.norm1(y)
        h = self.norm2(x) if pre else x
        y = x + self.dropout(self.cross_attn.attend(h, mem_k, mem_v, mask=cross_mask)[0])
        x = y if pre else self.norm2(y)
        h = self.norm3(x) if pre else x
        y = x + self.dropout(self.feed_forward(h))
        return y if pre else self.norm3(y)


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "In the cross-attention I passed h as key and value too, with the target mask, so it "
        "never reads the memory.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecCrossQueryFromMemory,
        "mistake",
        "I called cross_attn(memory, h, h): the memory as queries and the decoder as keys.",
    ),
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecNoTargetMask,
        "mistake",
        "I forgot tgt_mask in the decoder's self-attention, so it sees the future.",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask_no_padding",
        DecOwnCausalMask,
        "mistake",
        "I built the causal mask myself with torch.tril and passed it instead of tgt_mask, so "
        "target padding is not masked.",
    ),
    BlindCase(
        CHECK,
        "target_mask_transposed",
        DecTargetMaskTransposed,
        "mistake",
        "I transposed tgt_mask's last two axes, so each position sees the ones after it.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_unmasked",
        DecNoSourceMask,
        "mistake",
        "I forgot src_mask in the cross-attention, so source padding is read.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossFirst,
        "mistake",
        "I put the cross-attention first and the masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "No residual connection around the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normalized",
        DecMemoryNormalized,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "self_attn_used_for_cross",
        DecSelfAttnTwice,
        "mistake",
        "I wrote self.self_attn for the cross-attention too, so cross_attn's weights are unused.",
    ),
    BlindCase(
        CHECK,
        "target_mask_inverted",
        DecTargetMaskInverted,
        "mistake",
        "I passed ~tgt_mask, as if True meant blocked.",
    ),
    BlindCase(
        CHECK,
        "norm2_norm3_swapped",
        DecNormsShifted,
        "mistake",
        "I used norm3 around the cross-attention and norm2 around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "prenorm_stream_normalized",
        DecPrenormNoResidualStream,
        "mistake",
        "In pre-norm I overwrote x with norm(x) before each sub-layer, so the residual adds "
        "to the normalised stream.",
    ),
    BlindCase(
        CHECK,
        "masks_swapped",
        DecMasksSwapped,
        "mistake",
        "I gave src_mask to the self-attention and tgt_mask to the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "explicit_if_else",
        DecExplicit,
        "correct",
        "Each mode written out in full in one if/else.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        DecModuleListLoop,
        "correct",
        "A loop over (sub-layer, norm) pairs, F.dropout with self.training; optional masks and "
        "a fused_attention flag.",
    ),
    BlindCase(
        CHECK,
        "project_memory_once",
        DecProjectKvOnce,
        "correct",
        "The memory projected once with project_kv and attended with attend; the source mask "
        "expanded to (B, 1, T, S).",
    ),
]
