"""Blind set B29, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The layers every variant builds, with the book's names."""

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

    def _sub(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        """One sub-layer with its residual connection, post- or pre-norm."""
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsTarget(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # cross-attention: the queries attend ... to the decoder's own states
        x = self._sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCausal(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecSrcMaskUnused(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~tgt_mask  # "True = the future, to be masked"
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=blocked)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNorm2Reused(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm2)  # copy-pasted from the line above


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            m = self.norm2(memory)  # normalize what goes into the attention: queries and memory
            x = x + self.dropout(self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecOwnCausalOffByOne(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril(diagonal=1)
        mask = tgt_mask[:, :, -1:, :] & causal  # the padding row, with my own causal part
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        a, _ = self.self_attn(x, x, x, mask=tgt_mask)
        x = self.norm1(x + self.dropout(a))
        c, _ = self.cross_attn(x, memory, memory, mask=src_mask)
        x = self.norm2(x + self.dropout(c))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecCrossQueryFromInput(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x0 = x
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        q = self.norm2(x0) if self.norm_first else x0  # queries: the block's target input
        c, _ = self.cross_attn(q, memory, memory, mask=src_mask)
        x = x + self.dropout(c) if self.norm_first else self.norm2(x + self.dropout(c))
        return self._sub(x, self.feed_forward, self.norm3)


class DecPreNormCrossQueryRaw(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            c, _ = self.cross_attn(x, memory, memory, mask=src_mask)  # norm2 forgotten here
            x = x + self.dropout(c)
        else:
            c, _ = self.cross_attn(x, memory, memory, mask=src_mask)
            x = self.norm2(x + self.dropout(c))
        return self._sub(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # the arguments read in the order of the sub-layers: source first, then target
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecExplicit(_Base):
    """Written out without a residual function, post-norm and pre-norm in two branches."""

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


class DecProjectAttend(nn.Module):
    """Keys and values projected with project_kv, the memory's once; functional dropout;
    masks optional with defaults."""

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
        self.p = dropout
        self.norm_first = norm_first

    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        h = norm(x) if self.norm_first else x
        y = x + F.dropout(fn(h), self.p, self.training)
        return y if self.norm_first else norm(y)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)

        def self_attention(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_attention(h: Tensor) -> Tensor:
            return self.cross_attn.attend(h, mem_k, mem_v, mask=src_mask)[0]

        x = self._add_norm(x, self_attention, self.norm1)
        x = self._add_norm(x, cross_attention, self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecSublayerList(_Base):
    """The three sub-layers as a list of (function, norm) pairs, run in a loop."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        def cross(h: Tensor) -> Tensor:
            return self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)[0]

        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (cross, self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            x = self._sub(x, fn, norm)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "My cross-attention took keys and values from the decoder's own states instead of the "
        "memory.",
    ),
    BlindCase(
        CHECK,
        "no_causal_mask",
        DecNoCausal,
        "mistake",
        "I called the masked self-attention without tgt_mask.",
    ),
    BlindCase(
        CHECK,
        "src_mask_unused",
        DecSrcMaskUnused,
        "mistake",
        "The cross-attention reads the memory without src_mask, so it sees the source padding.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I inverted tgt_mask, thinking True marks the future positions to block.",
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
        "norm2_reused_for_ffn",
        DecNorm2Reused,
        "mistake",
        "The feed-forward sub-layer uses norm2 again (copy-paste), norm3 is never used.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I forgot the residual connection around the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normalized",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "own_causal_off_by_one",
        DecOwnCausalOffByOne,
        "mistake",
        "I built my own causal mask with tril(diagonal=1) and combined it with the last row of "
        "tgt_mask for the padding, so each position also sees the next one.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        DecAlwaysPostNorm,
        "mistake",
        "My forward always does post-norm; norm_first is never read.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_block_input",
        DecCrossQueryFromInput,
        "mistake",
        "The cross-attention's queries come from the block's input x, not from the output of "
        "the masked self-attention.",
    ),
    BlindCase(
        CHECK,
        "prenorm_cross_query_not_normed",
        DecPreNormCrossQueryRaw,
        "mistake",
        "In pre-norm I forgot norm2 before the cross-attention: its query is the raw stream.",
    ),
    BlindCase(
        CHECK,
        "masks_swapped",
        DecMasksSwapped,
        "mistake",
        "I used src_mask in the self-attention and tgt_mask in the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicit,
        "correct",
        "Without a residual function: both norm modes written out in an if/else.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        DecProjectAttend,
        "correct",
        "project_kv and attend instead of calling the modules, the memory projected once, "
        "F.dropout, and masks that default to None.",
    ),
    BlindCase(
        CHECK,
        "sublayer_list",
        DecSublayerList,
        "correct",
        "The three sub-layers as (function, norm) pairs in a list, run in a loop; keyword "
        "arguments for the cross-attention.",
    ),
]
