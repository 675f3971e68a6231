"""Blind set B11, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The layers every version below has, with the book's names."""

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


class DecOwnCausalMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # my own mask
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecCrossReadsItself(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecCrossNoMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=~src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecCausalTransposed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mask = tgt_mask.transpose(-1, -2)  # (B, 1, T, T) rows = keys, I thought
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.sub(x, self.feed_forward, self.norm3)


class DecNorms23Swapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3)
        return self.sub(x, self.feed_forward, self.norm2)


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.self_attn(*[self.norm1(x)] * 3, mask=tgt_mask)[0])
            h, m = self.norm2(x), self.norm2(memory)  # normalise both sides of the attention
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecAlwaysPreNorm(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # pre-norm is the modern choice, so I wrote only that one
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = x + self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecPostNormOnSublayer(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
            x = self.sub(
                x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
            )
            return self.sub(x, self.feed_forward, self.norm3)
        x = x + self.norm1(self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = x + self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return x + self.norm3(self.dropout(self.feed_forward(x)))


class DecPreNormOnlyQuery(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            # only the query goes through the norm; keys and values are the stream itself
            x = x + self.dropout(self.self_attn(self.norm1(x), x, x, mask=tgt_mask)[0])
            x = x + self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class DecExplicitBranches(_Base):
    """Written out without a helper, pre- and post-norm in two branches."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, src_mask)[0])
            x = x + self.dropout(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
            x = self.norm3(x + self.dropout(self.feed_forward(x)))
        return x


class DecModuleListNorms(nn.Module):
    """Sub-layers and their norms walked in a loop; optional masks default to None; an extra
    ``need_weights`` argument that also returns the cross-attention weights."""

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
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
        need_weights: bool = False,
    ):
        cross_weights = []

        def cross(h: Tensor) -> Tensor:
            out, w = self.cross_attn(h, memory, memory, mask=src_mask, need_weights=need_weights)
            cross_weights.append(w)
            return out

        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (cross, self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            if self.norm_first:
                x = x + self.drop(fn(norm(x)))
            else:
                x = norm(x + self.drop(fn(x)))
        return (x, cross_weights[0]) if need_weights else x


class DecExpandedMasks(_Base):
    """The source mask expanded to (B, 1, T, S) and the target mask combined with an explicit
    causal ``tril`` (which it already contains, so nothing changes)."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        B, T, _ = x.shape
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        self_mask = tgt_mask & causal  # (B, 1, T, T)
        cross_mask = src_mask.expand(B, 1, T, memory.shape[1])  # (B, 1, T, S)
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=self_mask)[0], self.norm1)
        x = self.sub(
            x,
            lambda h: self.cross_attn(query=h, key=memory, value=memory, mask=cross_mask)[0],
            self.norm2,
        )
        return self.sub(x, self.feed_forward, self.norm3)


CASES = [
    BlindCase(
        CHECK,
        "own_causal_mask_no_padding",
        DecOwnCausalMask,
        "mistake",
        "I built my own causal tril mask for self-attention instead of using tgt_mask, so the "
        "target padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_reads_target",
        DecCrossReadsItself,
        "mistake",
        "I copied the self-attention line for the cross-attention: cross_attn(h, h, h, "
        "tgt_mask), so the memory is never read.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_no_source_mask",
        DecCrossNoMask,
        "mistake",
        "I called the cross-attention without src_mask, so the source padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "masks_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I passed ~tgt_mask and ~src_mask (True = blocked, as in nn.Transformer).",
    ),
    BlindCase(
        CHECK,
        "causal_mask_transposed",
        DecCausalTransposed,
        "mistake",
        "I transposed tgt_mask thinking its rows are keys, so each position sees the future "
        "instead of the past.",
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
        "I forgot the residual connection around the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "norm2_norm3_swapped",
        DecNorms23Swapped,
        "mistake",
        "I used norm3 around the cross-attention and norm2 around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_memory",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "always_prenorm",
        DecAlwaysPreNorm,
        "mistake",
        "I wrote only the pre-norm version and ignored norm_first=False.",
    ),
    BlindCase(
        CHECK,
        "postnorm_on_sublayer_output",
        DecPostNormOnSublayer,
        "mistake",
        "In post-norm I wrote x + norm(sublayer(x)) instead of norm(x + sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "prenorm_self_attention_query_only",
        DecPreNormOnlyQuery,
        "mistake",
        "In pre-norm I normalised only the query of the self-attention: "
        "self_attn(norm1(x), x, x), so keys and values come from the unnormalised stream.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicitBranches,
        "correct",
        "No helper: pre-norm and post-norm as two explicit branches, masks passed by position.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        DecModuleListNorms,
        "correct",
        "The three sub-layers walked in a loop of (function, norm) pairs; masks default to None; "
        "an extra need_weights argument.",
    ),
    BlindCase(
        CHECK,
        "expanded_masks",
        DecExpandedMasks,
        "correct",
        "The source mask expanded to (B, 1, T, S); tgt_mask ANDed with a causal tril it already "
        "contains; keyword calls.",
    ),
]
