"""Blind set B31, check_decoder_layer (chapter 13): one decoder block as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The book's layer names; every reader's block below builds the same ones."""

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

    def _self(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]

    def _cross(self, h: Tensor, memory: Tensor, mask: Tensor | None) -> Tensor:
        return self.cross_attn(h, memory, memory, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class DecCrossReadsX(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, tgt_mask), self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, h, h, mask=None)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossQueryFromMemory(_Layers):
    """Cross-attention called as cross_attn(memory, x, x): the memory asks the questions."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, tgt_mask), self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(memory, h, h)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoTgtMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, None), self.norm1)
        x = self._sub(x, lambda h: self._cross(h, memory, src_mask), self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoSrcMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, tgt_mask), self.norm1)
        x = self._sub(x, lambda h: self._cross(h, memory, None), self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, src_mask), self.norm1)
        x = self._sub(x, lambda h: self._cross(h, memory, tgt_mask), self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._cross(h, memory, src_mask), self.norm2)
        x = self._sub(x, lambda h: self._self(h, tgt_mask), self.norm1)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, tgt_mask), self.norm1)
        if self.norm_first:
            x = self.dropout(self._cross(self.norm2(x), memory, src_mask))
        else:
            x = self.norm2(self.dropout(self._cross(x, memory, src_mask)))
        return self._sub(x, self.feed_forward, self.norm3)


class DecAlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._self(x, tgt_mask)))
        x = self.norm2(x + self.dropout(self._cross(x, memory, src_mask)))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecPreNormNormsMemory(_Layers):
    """Pre-norm: norm2 applied to the memory as well as to the queries."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self._self(x, tgt_mask)))
            x = self.norm2(x + self.dropout(self._cross(x, memory, src_mask)))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        x = x + self.dropout(self._self(self.norm1(x), tgt_mask))
        m = self.norm2(memory)
        x = x + self.dropout(self._cross(self.norm2(x), m, src_mask))
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecTgtMaskInverted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, ~tgt_mask), self.norm1)
        x = self._sub(x, lambda h: self._cross(h, memory, src_mask), self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecFfnResidualFromInput(_Layers):
    """The last residual adds the block's input (x0) instead of the current stream."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x0 = x
        x1 = self._sub(x0, lambda h: self._self(h, tgt_mask), self.norm1)
        x2 = self._sub(x1, lambda h: self._cross(h, memory, src_mask), self.norm2)
        if self.norm_first:
            return x0 + self.dropout(self.feed_forward(self.norm3(x2)))
        return self.norm3(x0 + self.dropout(self.feed_forward(x2)))


class DecOwnCausalUpper(_Layers):
    """Built my own causal mask with triu, keeping the upper triangle (the future)."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).triu()
        padding = tgt_mask[:, :, -1:, :]  # the last row sees every real key
        mask = causal & padding
        x = self._sub(x, lambda h: self._self(h, mask), self.norm1)
        x = self._sub(x, lambda h: self._cross(h, memory, src_mask), self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecPreNormCrossQueryRaw(_Layers):
    """Pre-norm: the cross-attention query is the raw stream; only the FFN input is normed."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, tgt_mask), self.norm1)
        if self.norm_first:
            x = x + self.dropout(self._cross(x, memory, src_mask))
        else:
            x = self.norm2(x + self.dropout(self._cross(x, memory, src_mask)))
        return self._sub(x, self.feed_forward, self.norm3)


class DecPostNormNormInside(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._self(self.norm1(x), tgt_mask))
            x = x + self.dropout(self._cross(self.norm2(x), memory, src_mask))
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = x + self.norm1(self.dropout(self._self(x, tgt_mask)))
        x = x + self.norm2(self.dropout(self._cross(x, memory, src_mask)))
        return x + self.norm3(self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class DecExplicit(nn.Module):
    """Written out without a helper; F.dropout tied to self.training."""

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
        self.p, self.norm_first = dropout, norm_first

    def _drop(self, t: Tensor) -> Tensor:
        return F.dropout(t, self.p, self.training)

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self._drop(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self._drop(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self._drop(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self._drop(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self._drop(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self._drop(self.feed_forward(x)))


class DecLoopOverSublayers(_Layers):
    """The three sub-layers in a list, run in a loop; masks default to None."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            x = self._sub(x, fn, norm)
        return x


class DecProjectKvOnce(_Layers):
    """Cross-attention through project_kv + attend, as the chapter's cache-ready block does."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self._self(h, tgt_mask), self.norm1)
        k, v = self.cross_attn.project_kv(memory, memory)
        x = self._sub(x, lambda h: self.cross_attn.attend(h, k, v, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_x",
        DecCrossReadsX,
        "mistake",
        "My cross-attention used x for the keys and values too, never the encoder memory.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecCrossQueryFromMemory,
        "mistake",
        "I called cross_attn(memory, x, x): queries from the memory, keys and values from x.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_unused",
        DecNoTgtMask,
        "mistake",
        "The masked self-attention got no mask, so each position sees the future.",
    ),
    BlindCase(
        CHECK,
        "src_mask_unused",
        DecNoSrcMask,
        "mistake",
        "I forgot to pass src_mask to the cross-attention; source padding is read.",
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
        "No residual connection around the cross-attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        DecAlwaysPostNorm,
        "mistake",
        "I always computed post-norm, whatever norm_first says.",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_memory",
        DecPreNormNormsMemory,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I inverted tgt_mask (~tgt_mask), thinking True marks what must be hidden.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_block_input",
        DecFfnResidualFromInput,
        "mistake",
        "The FFN's residual added the block's original input x0 instead of the current x.",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask_upper",
        DecOwnCausalUpper,
        "mistake",
        "I built my own causal mask with triu(), which keeps the future instead of the past.",
    ),
    BlindCase(
        CHECK,
        "prenorm_cross_query_unnormed",
        DecPreNormCrossQueryRaw,
        "mistake",
        "In pre-norm I forgot norm2 before the cross-attention: its query is the raw stream.",
    ),
    BlindCase(
        CHECK,
        "postnorm_norm_inside_residual",
        DecPostNormNormInside,
        "mistake",
        "For post-norm I wrote x + norm(sublayer(x)) in all three sub-layers.",
    ),
    BlindCase(
        CHECK,
        "explicit_functional_dropout",
        DecExplicit,
        "correct",
        "Every sub-layer written out, with F.dropout(p, self.training) instead of a module.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers",
        DecLoopOverSublayers,
        "correct",
        "The three (sub-layer, norm) pairs in a list, applied in a loop; masks default to None.",
    ),
    BlindCase(
        CHECK,
        "project_kv_then_attend",
        DecProjectKvOnce,
        "correct",
        "The memory projected once with project_kv, then cross_attn.attend for the queries.",
    ),
]
