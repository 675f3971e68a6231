"""Blind set B16, check_decoder_layer (chapter 13): one decoder block as readers write it."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The book's layer names; each case below writes its own ``forward``."""

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

    def sub(self, x: Tensor, f: Callable[[Tensor], Tensor], norm: nn.LayerNorm) -> Tensor:
        """A right Add & Norm, for the mistakes that are elsewhere."""
        if self.norm_first:
            return x + self.dropout(f(norm(x)))
        return norm(x + self.dropout(f(x)))


# ---------------------------------------------------------------- mistakes


class DecNoCausalMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # no mask here
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        future = ~tgt_mask  # True = the positions to hide, I thought
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=future)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecCrossReadsTarget(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the second attention over the decoder's own states again
        x = self.sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecSrcMaskUnused(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecOwnTriuMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.sub(x, self.feed_forward, self.norm3)


class DecFfnBeforeCross(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, self.feed_forward, self.norm2)
        return self.sub(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3
        )


class DecCrossQueriesFromInput(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # both attentions read the block's input x
        a = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        c = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(a + c, self.feed_forward, self.norm3)


class DecPreNormNormsMemory(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h, m = self.norm2(x), self.norm2(memory)  # everything entering the sub-layer
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.sub(x, self.feed_forward, self.norm3)


class DecNorm3Unused(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self.sub(x, self.feed_forward, self.norm2)  # norm2 again


class DecNormFirstIgnored(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        a, _ = self.self_attn(x, x, x, mask=tgt_mask)
        x = self.norm1(x + self.dropout(a))
        c, _ = self.cross_attn(x, memory, memory, mask=src_mask)
        x = self.norm2(x + self.dropout(c))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecPostNormInsideBranch(_Layers):
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


# ---------------------------------------------------------------- correct variants


class DecInline(_Layers):
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


class DecProjectAttendFused(_Layers):
    """Cross-attention keys and values through project_kv, fused attention, optional masks."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
        fused: bool = True,
    ) -> Tensor:
        k, v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh), once

        def self_attention(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h, mask=tgt_mask, fused=fused)[0]

        def cross_attention(h: Tensor) -> Tensor:
            return self.cross_attn.attend(h, k, v, mask=src_mask, fused=fused)[0]

        for f, norm in (
            (self_attention, self.norm1),
            (cross_attention, self.norm2),
            (self.feed_forward, self.norm3),
        ):
            x = self.sub(x, f, norm)
        return x


class DecFunctionalDropout(nn.Module):
    """Own ``__init__`` with F.dropout, a ``residual`` static method, and an extra helper."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.p = dropout
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    @staticmethod
    def residual(x: Tensor, branch: Tensor, norm: nn.LayerNorm | None) -> Tensor:
        out = x + branch
        return out if norm is None else norm(out)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        pre, drop = self.norm_first, (lambda t: F.dropout(t, self.p, self.training))
        h = self.norm1(x) if pre else x
        x = self.residual(
            x, drop(self.self_attn(h, h, h, tgt_mask)[0]), None if pre else self.norm1
        )
        h = self.norm2(x) if pre else x
        c = self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)[0]
        x = self.residual(x, drop(c), None if pre else self.norm2)
        h = self.norm3(x) if pre else x
        return self.residual(x, drop(self.feed_forward(h)), None if pre else self.norm3)


CASES = [
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecNoCausalMask,
        "mistake",
        "I called self_attn(h, h, h) without tgt_mask, so each position sees the future.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I passed ~tgt_mask to the self-attention, thinking True marks the future to hide.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "My second attention takes keys and values from the decoder's own states (with "
        "tgt_mask) instead of from the memory.",
    ),
    BlindCase(
        CHECK,
        "src_mask_unused",
        DecSrcMaskUnused,
        "mistake",
        "I forgot to pass src_mask to the cross-attention, so padded source tokens are read.",
    ),
    BlindCase(
        CHECK,
        "own_triu_causal_mask",
        DecOwnTriuMask,
        "mistake",
        "I built the causal mask myself with torch.triu(ones, diagonal=1), as for PyTorch, and "
        "used it instead of tgt_mask: with True = may attend it lets each position see only the "
        "future.",
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
        "ffn_before_cross_attention",
        DecFfnBeforeCross,
        "mistake",
        "I put the feed-forward network second and the cross-attention last.",
    ),
    BlindCase(
        CHECK,
        "cross_queries_from_block_input",
        DecCrossQueriesFromInput,
        "mistake",
        "I ran the self-attention and the cross-attention side by side on the block's input x "
        "and added their results, so the cross-attention's queries are not the self-attention's "
        "output.",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalises_memory",
        DecPreNormNormsMemory,
        "mistake",
        "In pre-norm mode I passed the memory through norm2 too before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "norm2_for_ffn",
        DecNorm3Unused,
        "mistake",
        "I used norm2 again around the feed-forward network; norm3 is made but never used.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        DecNormFirstIgnored,
        "mistake",
        "I only wrote post-norm; norm_first=True gives the same post-norm block.",
    ),
    BlindCase(
        CHECK,
        "postnorm_norm_inside_branch",
        DecPostNormInsideBranch,
        "mistake",
        "For post-norm I wrote x + LayerNorm(sublayer(x)) for each sub-layer.",
    ),
    BlindCase(
        CHECK,
        "inline_positional_masks",
        DecInline,
        "correct",
        "Both modes written out inline, masks passed positionally.",
    ),
    BlindCase(
        CHECK,
        "project_kv_fused_loop",
        DecProjectAttendFused,
        "correct",
        "The memory projected once with project_kv and attended with attend, fused attention, "
        "optional masks and an extra fused argument, the three sub-layers in a loop.",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_helpers",
        DecFunctionalDropout,
        "correct",
        "My own __init__ (norms made in one generator), F.dropout, a static residual helper, "
        "keyword arguments for the cross-attention, and an extra num_parameters method.",
    ),
]
