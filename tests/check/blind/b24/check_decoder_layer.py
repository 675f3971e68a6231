"""Blind set B24, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Decoder(nn.Module):
    """The layers every reader builds the same way; the variants differ in ``forward``."""

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

    def _block(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecNoSelfMask(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


class DecCrossNoSrcMask(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._block(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._block(x, self.feed_forward, self.norm3)


class DecCrossReadsTarget(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # copied from the line above and changed the layer, not its keys and values
        x = self._block(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._block(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        return self._block(x, self.feed_forward, self.norm3)


class DecTgtMaskTransposed(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mask = tgt_mask.transpose(-2, -1)  # (B, 1, T, T) -> keys by queries, I thought
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


class DecSrcMaskInverted(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._block(
            x, lambda h: self.cross_attn(h, memory, memory, mask=~src_mask)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._block(x, self.feed_forward, self.norm3)


class DecPrenormMemoryNormalised(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h, m = self.norm2(x), self.norm2(memory)  # normalise everything that goes in
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecPrenormCrossQueryRaw(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            # the memory is already normalised by the encoder, so no norm here
            x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecPostnormOneNorm(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.self_attn(*[self.norm1(x)] * 3, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        # post-norm: add the three sub-layers, normalise once at the end of the block
        x = x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0])
        x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecIgnoresNormFirst(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecFfnResidualFromSelf(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        a = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        b = self._block(
            a, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        if self.norm_first:
            return a + self.dropout(self.feed_forward(self.norm3(b)))
        return self.norm3(a + self.dropout(self.feed_forward(b)))


class DecSelfAttnReusedForCross(_Decoder):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._block(
            x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._block(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecExplicitBranches(nn.Module):
    """Everything spelled out, pre- and post-norm in two branches, a dropout per sub-layer."""

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
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop1, self.drop2, self.drop3 = (nn.Dropout(dropout) for _ in range(3))

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop1(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.drop2(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            h = self.norm3(x)
            x = x + self.drop3(self.feed_forward(h))
        else:
            x = self.norm1(x + self.drop1(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.drop2(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            x = self.norm3(x + self.drop3(self.feed_forward(x)))
        return x


class DecProjectKvFused(_Decoder):
    """Keys and values projected with project_kv, attention by the fused kernel."""

    def _self(self, h: Tensor, mask: Tensor) -> Tensor:
        k, v = self.self_attn.project_kv(h, h)
        return self.self_attn.attend(h, k, v, mask=mask, fused=True)[0]

    def _cross(self, h: Tensor, memory: Tensor, mask: Tensor) -> Tensor:
        k, v = self.cross_attn.project_kv(memory, memory)
        return self.cross_attn.attend(h, k, v, mask=mask, fused=True)[0]

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._block(x, lambda h: self._self(h, tgt_mask), self.norm1)
        x = self._block(x, lambda h: self._cross(h, memory, src_mask), self.norm2)
        return self._block(x, self.feed_forward, self.norm3)


class DecSublayerTable(_Decoder):
    """A table of (sub-layer, norm) pairs walked in order; weights requested and dropped."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        table = (
            (lambda h: self.self_attn(h, h, h, tgt_mask, need_weights=True)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, src_mask, need_weights=True)[0],
             self.norm2),
            (lambda h: self.feed_forward(h), self.norm3),
        )  # fmt: skip
        for sublayer, norm in table:
            if self.norm_first:
                x = x + self.dropout(sublayer(norm(x)))
            else:
                x = norm(x + self.dropout(sublayer(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecNoSelfMask,
        "mistake",
        "I forgot to pass tgt_mask to the self-attention, so each position sees the future.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_no_src_mask",
        DecCrossNoSrcMask,
        "mistake",
        "The cross-attention gets no mask: the source padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "Copy-paste: cross_attn(h, h, h, mask=tgt_mask), so it never reads the memory.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossFirst,
        "mistake",
        "Cross-attention first, then masked self-attention, then the FFN.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_transposed",
        DecTgtMaskTransposed,
        "mistake",
        "I transposed tgt_mask's last two axes before using it, so the triangle points ahead.",
    ),
    BlindCase(
        CHECK,
        "src_mask_inverted",
        DecSrcMaskInverted,
        "mistake",
        "I passed ~src_mask to the cross-attention (True = padding, PyTorch's polarity).",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "The cross-attention sub-layer has no residual: its output replaces the stream.",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normalised",
        DecPrenormMemoryNormalised,
        "mistake",
        "Pre-norm: I put norm2 on the memory as well as on the queries.",
    ),
    BlindCase(
        CHECK,
        "prenorm_cross_query_not_normalised",
        DecPrenormCrossQueryRaw,
        "mistake",
        "Pre-norm: I left norm2 out before the cross-attention, thinking the memory was normed.",
    ),
    BlindCase(
        CHECK,
        "postnorm_one_norm_at_end",
        DecPostnormOneNorm,
        "mistake",
        "Post-norm: three residual additions and only one LayerNorm at the end of the block.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        DecIgnoresNormFirst,
        "mistake",
        "norm_first is accepted and ignored: always post-norm.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_self_attention",
        DecFfnResidualFromSelf,
        "mistake",
        "The FFN's residual adds the stream after self-attention (a), not after cross (b).",
    ),
    BlindCase(
        CHECK,
        "self_attn_reused_for_cross",
        DecSelfAttnReusedForCross,
        "mistake",
        "Copy-paste: the cross-attention line calls self.self_attn(h, memory, memory); "
        "cross_attn is built but never used.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicitBranches,
        "correct",
        "Two explicit branches, three dropouts, masks with None defaults.",
    ),
    BlindCase(
        CHECK,
        "project_kv_fused",
        DecProjectKvFused,
        "correct",
        "project_kv then attend(fused=True) for both attentions.",
    ),
    BlindCase(
        CHECK,
        "sublayer_table",
        DecSublayerTable,
        "correct",
        "A loop over (sub-layer, norm) pairs; masks passed positionally, weights discarded.",
    ),
]
