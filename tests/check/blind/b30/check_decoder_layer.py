"""Blind set B30, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The book's layers under the book's names, shared by the mistakes that are in
    ``forward``."""

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

    def _add_norm(self, x: Tensor, norm: nn.LayerNorm, sublayer) -> Tensor:
        """A right Add & Norm, for the mistakes that are elsewhere."""
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsSelf(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = self._add_norm(x, self.norm2, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0])
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecMasksSwapped(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=src_mask)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0]
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecNoSelfMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecTgtMaskInverted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecNoCrossResidual(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecCrossFirst(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, self.norm1, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        x = self._add_norm(x, self.norm2, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecSrcMaskUnused(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = self._add_norm(x, self.norm2, lambda h: self.cross_attn(h, memory, memory)[0])
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecNorm3Unused(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        return self._add_norm(x, self.norm2, self.feed_forward)  # copied the line above


class DecNormPlusSublayer(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x) + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0])
        x = self.norm2(x) + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        return self.norm3(x) + self.dropout(self.feed_forward(x))


class DecAlwaysPreNorm(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        h = self.norm2(x)
        x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecMemoryNormalised(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        if self.norm_first:
            m = self.norm2(memory)  # keys and values normalised like the query
            x = x + self.dropout(self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecExtraCausal(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril(-1)  # strictly past
        mask = tgt_mask & causal
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=mask)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecSharedAttention(nn.Module):
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
        self.cross_attn = self.self_attn  # one attention layer used twice
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        add_norm = _Layers._add_norm
        x = add_norm(self, x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = add_norm(
            self, x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        return add_norm(self, x, self.norm3, self.feed_forward)


# ---------------------------------------------------------------- correct variants


class DecWrittenOut(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            h = self.norm3(x)
            return x + self.dropout(self.feed_forward(h))
        out, _ = self.self_attn(x, x, x, mask=tgt_mask)
        x = self.norm1(x + self.dropout(out))
        out, _ = self.cross_attn(x, memory, memory, mask=src_mask)
        x = self.norm2(x + self.dropout(out))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecProjectKv(_Layers):
    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor,
        src_mask: Tensor,
        cache: object | None = None,
    ) -> Tensor:
        def self_block(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_block(h: Tensor) -> Tensor:
            k, v = self.cross_attn.project_kv(memory, memory)  # the memory, projected
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        for norm, block in (
            (self.norm1, self_block),
            (self.norm2, cross_block),
            (self.norm3, self.feed_forward),
        ):
            x = self._add_norm(x, norm, block)
        return x


class DecFunctional(nn.Module):
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
        self.p = dropout
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        subs = [
            (self.norm1, lambda h: self.self_attn(h, h, h, tgt_mask)[0]),
            (self.norm2, lambda h: self.cross_attn(h, memory, memory, src_mask)[0]),
            (self.norm3, self.feed_forward),
        ]
        for norm, fn in subs:
            inp = norm(x) if self.norm_first else x
            y = x + F.dropout(fn(inp), p=self.p, training=self.training)
            x = y if self.norm_first else norm(y)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_itself",
        DecCrossReadsSelf,
        "mistake",
        "I copied the self-attention line for the cross-attention and only renamed the layer, "
        "so it attends to the decoder's own states with tgt_mask.",
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
        "self_attention_unmasked",
        DecNoSelfMask,
        "mistake",
        "I forgot to pass tgt_mask to the self-attention.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I passed ~tgt_mask to the self-attention, reading True as 'blocked'.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I left out the residual connection around the cross-attention.",
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
        "src_mask_unused",
        DecSrcMaskUnused,
        "mistake",
        "The cross-attention gets no mask, so it reads the source padding.",
    ),
    BlindCase(
        CHECK,
        "norm2_reused_for_ffn",
        DecNorm3Unused,
        "mistake",
        "I copied the cross-attention line for the feed-forward and left norm2 in it.",
    ),
    BlindCase(
        CHECK,
        "norm_plus_sublayer",
        DecNormPlusSublayer,
        "mistake",
        "In post-norm I wrote norm(x) + sublayer(x) instead of norm(x + sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "always_pre_norm",
        DecAlwaysPreNorm,
        "mistake",
        "I always wrote the pre-norm block and ignored norm_first.",
    ),
    BlindCase(
        CHECK,
        "memory_normalised",
        DecMemoryNormalised,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "extra_strict_causal",
        DecExtraCausal,
        "mistake",
        "To be safe I combined tgt_mask with my own causal mask, tril(-1), which also hides "
        "each position from itself.",
    ),
    BlindCase(
        CHECK,
        "one_attention_layer",
        DecSharedAttention,
        "mistake",
        "I set self.cross_attn = self.self_attn, one attention layer for both sub-layers.",
    ),
    BlindCase(
        CHECK,
        "written_out",
        DecWrittenOut,
        "correct",
        "Every sub-layer written out, pre-norm and post-norm as two branches.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        DecProjectKv,
        "correct",
        "Attention through MultiHeadAttention.project_kv and attend, a loop over the three "
        "(norm, sub-layer) pairs; an extra cache argument that defaults to None.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout",
        DecFunctional,
        "correct",
        "F.dropout instead of a Dropout module, masks passed by position, a loop over the "
        "sub-layers.",
    ),
]
