"""Blind set B21, check_decoder_layer (chapter 13): decoder blocks as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The book's layers, named as the chapter asks (shared by every case)."""

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


class DecCrossReadsTarget(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # copied the self-attention line and changed only the layer's name
        x = self._sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecSelfNoMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # no tgt_mask
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~tgt_mask  # nn.Transformer's polarity
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=blocked)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossNoMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)  # no src_mask
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecNormsMemory(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h, m = self.norm2(x), self.norm2(memory)  # normalised the memory as well
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecIgnoresNormFirst(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecNormOnSublayer(_Layers):
    def _sub(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return x + norm(self.dropout(fn(x)))  # Add & Norm read as "add the normalised output"

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecFfnSkipsCross(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x1 = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x2 = self._sub(  # noqa: F841 (the slip: x2 is never used)
            x1, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._sub(x1, self.feed_forward, self.norm3)  # x1 where x2 was meant


class DecCrossQueryRaw(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            self.norm2(x)  # computed, then queried with the raw stream
            x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecCausalTransposed(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mask = tgt_mask.transpose(-2, -1)  # (B, 1, T, T) "keys by queries"
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecValuesFromTarget(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # memory as the queries, the target as keys and values (the arguments in reverse)
        x = self._sub(
            x, lambda h: self.cross_attn(memory, h, h)[0].mean(1, keepdim=True), self.norm2
        )
        return self._sub(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecExplicit(_Layers):
    """Every sub-layer written out with if/else, no helper."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecProjectKv(_Layers):
    """Cross-attention through project_kv and attend; the causal mask and-ed in once more."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        mask = tgt_mask & causal  # already causal: no change

        def cross(h: Tensor) -> Tensor:
            k, v = self.cross_attn.project_kv(memory, memory)
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask)[0], self.norm1)
        x = self._sub(x, cross, self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecLoop(_Layers):
    """The three sub-layers as a list of (function, norm) pairs in a loop."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask, need_weights=True)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            if self.norm_first:
                x = torch.add(x, self.dropout(fn(norm(x))))
            else:
                x = norm(torch.add(x, self.dropout(fn(x))))
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_reads_target",
        DecCrossReadsTarget,
        "mistake",
        "my cross-attention line is the self-attention line with cross_attn: it reads x",
    ),
    BlindCase(
        CHECK,
        "self_no_mask",
        DecSelfNoMask,
        "mistake",
        "I forgot to pass tgt_mask to the decoder's self-attention",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I passed ~tgt_mask, True = blocked as in nn.Transformer",
    ),
    BlindCase(
        CHECK,
        "cross_no_mask",
        DecCrossNoMask,
        "mistake",
        "cross-attention without src_mask: source padding is attended",
    ),
    BlindCase(
        CHECK,
        "cross_first",
        DecCrossFirst,
        "mistake",
        "I put cross-attention before the masked self-attention",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I forgot the residual connection around cross-attention",
    ),
    BlindCase(
        CHECK,
        "prenorm_norms_memory",
        DecNormsMemory,
        "mistake",
        "in pre-norm I also ran the memory through norm2 before cross-attention",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        DecIgnoresNormFirst,
        "mistake",
        "I wrote only the post-norm block and ignored norm_first",
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer",
        DecNormOnSublayer,
        "mistake",
        "post-norm as x + norm(sublayer(x))",
    ),
    BlindCase(
        CHECK,
        "ffn_skips_cross",
        DecFfnSkipsCross,
        "mistake",
        "the feed-forward sub-layer takes x1 (after self-attention), not x2",
    ),
    BlindCase(
        CHECK,
        "prenorm_cross_query_raw",
        DecCrossQueryRaw,
        "mistake",
        "in pre-norm the cross-attention query is the raw x, not norm2(x)",
    ),
    BlindCase(
        CHECK,
        "causal_transposed",
        DecCausalTransposed,
        "mistake",
        "I transposed tgt_mask, so each position sees the future and not the past",
    ),
    BlindCase(
        CHECK,
        "memory_as_query",
        DecValuesFromTarget,
        "mistake",
        "I called cross_attn(memory, x, x) and averaged over the source to fit the shape",
    ),
    BlindCase(
        CHECK,
        "explicit_if_else",
        DecExplicit,
        "correct",
        "every sub-layer written out in an if/else on norm_first",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        DecProjectKv,
        "correct",
        "cross-attention via project_kv/attend; the causal mask and-ed in once more",
    ),
    BlindCase(
        CHECK,
        "loop_of_sublayers",
        DecLoop,
        "correct",
        "a loop over (sub-layer, norm) pairs, need_weights=True on self-attention",
    ),
]
