"""Blind set B23, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The layers as the chapter names them; each case writes its own ``forward``."""

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
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsTarget(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # cross-attention: I passed h three times, as in self-attention (no memory)
        x = self._sub(x, lambda h: self.cross_attn(h, h, h)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCausalMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # tgt_mask not passed
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossNoSrcMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)  # no mask
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # I flipped the source mask, thinking True marked the padding
        x = self._sub(
            x, lambda h: self.cross_attn(h, memory, memory, mask=~src_mask)[0], self.norm2
        )
        return self._sub(x, self.feed_forward, self.norm3)


class DecOwnCausalWrongPolarity(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        # I added my own causal mask on top of tgt_mask, with triu(1), the PyTorch way round
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        mask = tgt_mask & future
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossBeforeSelf(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            c = self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0]
            x = self.dropout(c)  # the residual "x +" is missing here
        else:
            c = self.cross_attn(x, memory, memory, mask=src_mask)[0]
            x = self.norm2(self.dropout(c))  # and here
        return self._sub(x, self.feed_forward, self.norm3)


class DecPreNormNormsMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            m = self.norm2(memory)  # I normalised every input of the sub-layer, memory too
            x = x + self.dropout(self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossReusesSelfAttn(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # cross_attn is built in __init__, but I called self_attn again here
        x = self._sub(x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecPostNormNoFinalNorm(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        if self.norm_first:
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        return x + self.dropout(self.feed_forward(x))  # post-norm: norm3 forgotten


class DecPreNormCrossResidualFromNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.norm2(x)  # I overwrote x with its normed copy, then added to it
            x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecSelfAttnQueriesFromInput(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x0 = x
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # cross-attention queries: I took the block's input, not the first sub-layer's output
        if self.norm_first:
            c = self.cross_attn(self.norm2(x0), memory, memory, mask=src_mask)[0]
            x = x + self.dropout(c)
        else:
            c = self.cross_attn(x0, memory, memory, mask=src_mask)[0]
            x = self.norm2(x + self.dropout(c))
        return self._sub(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecExplicit(nn.Module):
    """No helper, both modes written out; dropout module called ``drop``."""

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
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.drop(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            x = x + self.drop(self.feed_forward(self.norm3(x)))
            return x
        x = self.norm1(x + self.drop(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.drop(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.drop(self.feed_forward(x)))


class DecExtraCausal(_Base):
    """I and-ed a causal mask (tril) into tgt_mask to be safe; it is causal already."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        mask = tgt_mask & causal  # (B, 1, T, T)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecProjectMemoryOnce(_Base):
    """The memory projected with ``cross_attn.project_kv`` and read with ``attend``; the
    sub-layers in a list."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn.attend(h, mem_k, mem_v, mask=src_mask)[0], self.norm2),
            (lambda h: self.feed_forward(h), self.norm3),
        ]
        for fn, norm in steps:
            if self.norm_first:
                x = x + self.dropout(fn(norm(x)))
            else:
                x = norm(x + self.dropout(fn(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "in cross-attention I passed h as query, key and value: the memory is never read",
    ),
    BlindCase(
        CHECK,
        "self_attention_no_tgt_mask",
        DecNoCausalMask,
        "mistake",
        "I forgot mask=tgt_mask in the decoder's self-attention, so it sees the future",
    ),
    BlindCase(
        CHECK,
        "cross_attention_no_src_mask",
        DecCrossNoSrcMask,
        "mistake",
        "cross-attention without src_mask: the source padding is attended to",
    ),
    BlindCase(
        CHECK,
        "src_mask_inverted",
        DecCrossMaskInverted,
        "mistake",
        "I passed ~src_mask to cross-attention, thinking True meant padding",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask_triu",
        DecOwnCausalWrongPolarity,
        "mistake",
        "I and-ed my own causal mask, triu(ones, 1), into tgt_mask: True above the diagonal",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "I put cross-attention first and the masked self-attention second",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "the cross-attention sub-layer has no residual connection",
    ),
    BlindCase(
        CHECK,
        "pre_norm_normalises_memory",
        DecPreNormNormsMemory,
        "mistake",
        "in pre-norm I also passed the memory through norm2 before cross-attention",
    ),
    BlindCase(
        CHECK,
        "cross_uses_self_attn_weights",
        DecCrossReusesSelfAttn,
        "mistake",
        "I called self.self_attn for the cross-attention too; cross_attn is never used",
    ),
    BlindCase(
        CHECK,
        "post_norm_missing_norm3",
        DecPostNormNoFinalNorm,
        "mistake",
        "in post-norm mode I forgot the LayerNorm after the feed-forward sub-layer",
    ),
    BlindCase(
        CHECK,
        "pre_norm_cross_residual_from_normed",
        DecPreNormCrossResidualFromNormed,
        "mistake",
        "pre-norm: I wrote x = norm2(x) and then x + cross(x), losing the raw stream",
    ),
    BlindCase(
        CHECK,
        "cross_queries_from_block_input",
        DecSelfAttnQueriesFromInput,
        "mistake",
        "cross-attention's queries came from the block's input, not from the self-attention",
    ),
    BlindCase(
        CHECK,
        "explicit_both_modes",
        DecExplicit,
        "correct",
        "both modes written out line by line; my dropout module is called drop",
    ),
    BlindCase(
        CHECK,
        "extra_causal_and",
        DecExtraCausal,
        "correct",
        "I and-ed tril(ones) into tgt_mask to be safe, although it is causal already",
    ),
    BlindCase(
        CHECK,
        "memory_projected_once",
        DecProjectMemoryOnce,
        "correct",
        "memory projected once with project_kv and read with attend; sub-layers in a loop",
    ),
]
