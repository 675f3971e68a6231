"""Blind set B7, check_decoder_layer (chapter 13): one decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The book's layer names; each case below writes its own forward."""

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


class DecCrossReadsDecoder(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecSelfAttnUnmasked(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossNoSrcMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~tgt_mask  # I thought the causal mask marks the future with True
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=blocked)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossUsesSelfAttnModule(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossBeforeSelf(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecPreNormMemoryNormed(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h, m = self.norm2(x), self.norm2(memory)  # normalize what the sub-layer reads
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNorm3Unused(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm2)


class DecAlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecFfnResidualSkipsCross(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x1 = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x2 = self._add_norm(
            x1, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        if self.norm_first:
            return x1 + self.dropout(self.feed_forward(self.norm3(x2)))
        return self.norm3(x1 + self.dropout(self.feed_forward(x2)))


# ---------------------------------------------------------------- correct variants


class DecExplicit(_Layers):
    """Each sub-layer written out, with an extra ``cache=None`` argument that is unused here."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor,
        src_mask: Tensor,
        cache: object | None = None,
    ) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecProjectKvAttend(_Layers):
    """Cross-attention through project_kv and attend, the two halves of MultiHeadAttention."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        k, v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh)

        def cross(h: Tensor) -> Tensor:
            out, _ = self.cross_attn.attend(h, k, v, mask=src_mask)
            return out

        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, cross, self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecRedundantCausal(_Layers):
    """Adds its own causal mask on top of tgt_mask (already causal, so nothing changes)."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        self_mask = tgt_mask & causal  # (B, 1, T, T)
        sublayers = [
            (lambda h: self.self_attn(h, h, h, mask=self_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in sublayers:
            x = self._add_norm(x, fn, norm)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_decoder",
        DecCrossReadsDecoder,
        "mistake",
        "I copied the self-attention line for the cross-attention and changed only the module: "
        "cross_attn(h, h, h, mask=tgt_mask), so it never reads the memory.",
    ),
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecSelfAttnUnmasked,
        "mistake",
        "I called the decoder's self-attention without mask=tgt_mask, so a position sees the "
        "future tokens and the padding.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_no_src_mask",
        DecCrossNoSrcMask,
        "mistake",
        "I forgot mask=src_mask in the cross-attention, so the decoder attends to the source's "
        "padding.",
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
        "cross_uses_self_attn_module",
        DecCrossUsesSelfAttnModule,
        "mistake",
        "For the cross-attention I called self.self_attn(h, memory, memory, ...) instead of "
        "self.cross_attn, so both attentions use the self-attention weights.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "I put the cross-attention first (with norm1) and the masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normalized",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I passed the memory through norm2 as well as the queries before the "
        "cross-attention (post-norm is right).",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "The cross-attention sub-layer has no residual connection: its output replaces x.",
    ),
    BlindCase(
        CHECK,
        "norm3_unused",
        DecNorm3Unused,
        "mistake",
        "I made norm3 but used norm2 again around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        DecAlwaysPostNorm,
        "mistake",
        "I accept norm_first but always compute post-norm.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_skips_cross",
        DecFfnResidualSkipsCross,
        "mistake",
        "The feed-forward sub-layer reads the cross-attention's output but its residual adds "
        "the self-attention's output (x1 instead of x2).",
    ),
    BlindCase(
        CHECK,
        "explicit_with_cache_arg",
        DecExplicit,
        "correct",
        "All three sub-layers written out per norm placement; an unused cache=None argument.",
    ),
    BlindCase(
        CHECK,
        "cross_via_project_kv_attend",
        DecProjectKvAttend,
        "correct",
        "The memory projected once with cross_attn.project_kv, then cross_attn.attend for the "
        "queries.",
    ),
    BlindCase(
        CHECK,
        "redundant_causal_loop",
        DecRedundantCausal,
        "correct",
        "tgt_mask ANDed with my own causal tril mask (no change), sub-layers run in a loop over "
        "(function, norm) pairs.",
    ),
]
