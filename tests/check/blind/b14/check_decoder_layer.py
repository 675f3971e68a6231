"""Blind set B14, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layers, shared by every case below (only ``forward`` differs)."""

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

    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsItself(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # second attention: query, key and value all from the decoder
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoCausalMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoSrcMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~tgt_mask  # True = blocked, like nn.Transformer's masks
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=blocked)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecPreNormNormsMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:  # normalize everything that goes into the cross-attention
            m = self.norm2(memory)
            x = x + self.dropout(self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecNorm2ForFfn(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm2)  # norm3 left unused


class DecKeysFromMemoryValuesFromX(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # cross-attention: queries are the memory, keys and values the decoder
        x = self._add_norm(
            x,
            lambda h: self.cross_attn(memory, h, h, mask=tgt_mask)[0][:, : h.shape[1]],
            self.norm2,
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecPostNormFromBlockInput(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        a = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the cross-attention reads the block's input x rather than a
        c = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(c + a - x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecInline(nn.Module):
    """Written out branch by branch, dropout as F.dropout with the training flag."""

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
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.p, self.norm_first = dropout, norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        p, tr = self.p, self.training
        if self.norm_first:
            h = self.norm1(x)
            x = x + F.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0], p, tr)
            h = self.norm2(x)
            x = x + F.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0], p, tr)
            return x + F.dropout(self.feed_forward(self.norm3(x)), p, tr)
        x = self.norm1(x + F.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0], p, tr))
        x = self.norm2(x + F.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0], p, tr))
        return self.norm3(x + F.dropout(self.feed_forward(x), p, tr))


class DecProjectKvAttend(_Base):
    """Cross-attention through project_kv/attend, and optional extra arguments."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor,
        src_mask: Tensor,
        cache: object | None = None,
        need_weights: bool = False,
    ) -> Tensor:
        def cross(h: Tensor) -> Tensor:
            k, v = self.cross_attn.project_kv(memory, memory)
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, tgt_mask)[0], self.norm1)
        x = self._add_norm(x, cross, self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecLoop(_Base):
    """A loop over (sub-layer, norm) pairs; the residual kept in a temporary."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        subs = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in subs:
            skip = x
            if self.norm_first:
                x = norm(x)
            x = self.dropout(fn(x)) + skip
            if not self.norm_first:
                x = norm(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_reads_decoder",
        DecCrossReadsItself,
        "mistake",
        "My second attention takes keys and values from the decoder, not from memory.",
    ),
    BlindCase(
        CHECK,
        "no_causal_mask",
        DecNoCausalMask,
        "mistake",
        "I did not pass tgt_mask to the self-attention, so it sees the future.",
    ),
    BlindCase(
        CHECK,
        "no_src_mask",
        DecNoSrcMask,
        "mistake",
        "The cross-attention gets no src_mask, so it attends to source padding.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I inverted tgt_mask, thinking True means blocked as in nn.Transformer.",
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
        "The cross-attention has no residual: x is replaced by its output.",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_memory",
        DecPreNormNormsMemory,
        "mistake",
        "In pre-norm I also ran the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        DecIgnoresNormFirst,
        "mistake",
        "I accepted norm_first but always wrote post-norm.",
    ),
    BlindCase(
        CHECK,
        "norm2_for_ffn",
        DecNorm2ForFfn,
        "mistake",
        "I reused norm2 around the FFN; norm3 is created but never used.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecKeysFromMemoryValuesFromX,
        "mistake",
        "In the cross-attention I took the queries from memory and keys/values from x.",
    ),
    BlindCase(
        CHECK,
        "cross_reads_block_input",
        DecPostNormFromBlockInput,
        "mistake",
        "I fed the block's input to the cross-attention, in parallel with the self-attention.",
    ),
    BlindCase(
        CHECK,
        "inline_functional_dropout",
        DecInline,
        "correct",
        "Written out in two branches, norms made in a generator, F.dropout for dropout.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        DecProjectKvAttend,
        "correct",
        "Cross-attention via project_kv and attend; extra optional cache/need_weights args.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        DecLoop,
        "correct",
        "A loop over the three (sub-layer, norm) pairs with the skip kept in a temporary.",
    ),
]
