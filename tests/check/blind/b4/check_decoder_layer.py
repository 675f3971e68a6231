"""Blind cases for check_decoder_layer (chapter 13), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The layers every case builds, with the book's names."""

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


class SelfAttentionUnmasked(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class OwnTriuMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device))  # my own mask
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class CrossAttentionNoSourceMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class PreNormNormalizesMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        h, m = self.norm2(x), self.norm2(memory)  # normalize both sides of the cross-attention
        x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class NoResidualAroundCross(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class StaleVariableInFeedForward(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        y = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        if self.norm_first:
            return x + self.dropout(self.feed_forward(self.norm3(y)))
        return self.norm3(x + self.dropout(self.feed_forward(y)))


class Norm2ReusedForFeedForward(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm2)


class CrossBeforeSelf(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class ProjectThenAttend(_Base):
    """Correct: the book's project_kv/attend split, and an optional cache argument."""

    def forward(
        self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor, cache=None
    ) -> Tensor:
        def self_part(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_part(h: Tensor) -> Tensor:
            k, v = self.cross_attn.project_kv(memory, memory)
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        x = self._sub(x, self_part, self.norm1)
        x = self._sub(x, cross_part, self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class LoopOverSublayers(_Base):
    """Correct: the three sub-layers and their norms zipped in a loop."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for sublayer, norm in steps:
            if self.norm_first:
                x = x + self.dropout(sublayer(norm(x)))
            else:
                x = norm(x + self.dropout(sublayer(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        SelfAttentionUnmasked,
        "mistake",
        "I forgot to pass tgt_mask to the self-attention, so each position sees the future",
    ),
    BlindCase(
        CHECK,
        "own_triu_mask",
        OwnTriuMask,
        "mistake",
        "I ignored tgt_mask and built my own causal mask with torch.triu instead of tril",
    ),
    BlindCase(
        CHECK,
        "cross_attention_no_source_mask",
        CrossAttentionNoSourceMask,
        "mistake",
        "I did not pass src_mask to the cross-attention, so the source padding is read",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_memory",
        PreNormNormalizesMemory,
        "mistake",
        "in pre-norm I also ran the encoder memory through norm2 before the cross-attention",
    ),
    BlindCase(
        CHECK,
        "no_residual_around_cross",
        NoResidualAroundCross,
        "mistake",
        "I did not add x back around the cross-attention",
    ),
    BlindCase(
        CHECK,
        "stale_variable_in_feed_forward",
        StaleVariableInFeedForward,
        "mistake",
        "I stored the cross-attention result in y, fed y to the FFN but added the older x "
        "as the residual",
    ),
    BlindCase(
        CHECK,
        "norm2_reused_for_feed_forward",
        Norm2ReusedForFeedForward,
        "mistake",
        "I created norm3 but used norm2 again around the feed-forward network",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        CrossBeforeSelf,
        "mistake",
        "I put the cross-attention first and the masked self-attention second",
    ),
    BlindCase(
        CHECK,
        "project_then_attend",
        ProjectThenAttend,
        "correct",
        "MultiHeadAttention's project_kv and attend called separately, plus an unused "
        "optional cache argument",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        LoopOverSublayers,
        "correct",
        "the three sub-layers and their norms in a list, applied in a loop",
    ),
]
