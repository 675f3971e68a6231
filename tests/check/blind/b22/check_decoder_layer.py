"""Blind set B22, check_decoder_layer (chapter 13): decoder blocks as readers write them."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The layers every reader builds the same way; each case writes its own forward."""

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
        x = self._sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossQueryFromMemory(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(memory, h, h)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoTgtMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoSrcMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecInvertedTgtMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecPreNormMemoryNormed(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h, m = self.norm2(x), self.norm2(memory)  # normalise both inputs of the sub-layer
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossBeforeSelf(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h = self.norm2(x)
            x = self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecAlwaysPreNorm(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        h = self.norm2(x)
        x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecFfnReadsStaleX(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            y = x + self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
            return y + self.dropout(self.feed_forward(self.norm3(x)))
        y = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(y + self.dropout(self.feed_forward(x)))


class DecPreNormCrossResidualFromNormed(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.norm2(x)
            x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecSrcAttnName(nn.Module):
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
        self.src_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.src_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            if self.norm_first:
                x = x + self.dropout(fn(norm(x)))
            else:
                x = norm(x + self.dropout(fn(x)))
        return x


class DecMaskArgsSwapped(_Layers):
    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor, tgt_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecExplicitBranches(nn.Module):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop1, self.drop2, self.drop3 = (nn.Dropout(dropout) for _ in range(3))

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop1(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.drop2(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            x = x + self.drop3(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.drop1(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.drop2(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            x = self.norm3(x + self.drop3(self.feed_forward(x)))
        return x


class DecProjectKv(_Layers):
    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh) once

        def self_attention(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        x = self._sub(x, self_attention, self.norm1)
        x = self._sub(x, lambda h: self.cross_attn.attend(h, mem_k, mem_v, src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecKeywordCalls(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        sublayers = {
            "self": lambda h: self.self_attn(query=h, key=h, value=h, mask=tgt_mask)[0],
            "cross": lambda h: self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)[0],
            "ffn": self.feed_forward,
        }
        for name, norm in (("self", self.norm1), ("cross", self.norm2), ("ffn", self.norm3)):
            residual = x
            h = norm(x) if self.norm_first else x
            x = residual + self.dropout(sublayers[name](h))
            if not self.norm_first:
                x = norm(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_attends_to_target",
        DecCrossReadsTarget,
        "mistake",
        "My second attention uses the decoder's own h for keys and values, not the memory.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecCrossQueryFromMemory,
        "mistake",
        "I gave cross-attention the memory as the query and the decoder state as keys/values "
        "(and no mask).",
    ),
    BlindCase(
        CHECK,
        "no_causal_mask",
        DecNoTgtMask,
        "mistake",
        "I did not pass tgt_mask to the self-attention, so it sees the future.",
    ),
    BlindCase(
        CHECK,
        "no_source_mask",
        DecNoSrcMask,
        "mistake",
        "The cross-attention gets no mask: source padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "inverted_target_mask",
        DecInvertedTgtMask,
        "mistake",
        "I passed ~tgt_mask to self-attention, thinking True marks what is blocked.",
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
        "prenorm_memory_normalised",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I applied norm2 to the memory as well as to x before cross-attention.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "I put cross-attention first and the masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "The cross-attention sub-layer has no residual: its output replaces x.",
    ),
    BlindCase(
        CHECK,
        "always_prenorm",
        DecAlwaysPreNorm,
        "mistake",
        "I wrote only the pre-norm formulas and ignored norm_first=False.",
    ),
    BlindCase(
        CHECK,
        "ffn_reads_stale_x",
        DecFfnReadsStaleX,
        "mistake",
        "The FFN reads x from before the cross-attention; the cross-attention result y only "
        "enters through the residual.",
    ),
    BlindCase(
        CHECK,
        "prenorm_cross_residual_from_normed",
        DecPreNormCrossResidualFromNormed,
        "mistake",
        "In pre-norm I wrote x = norm2(x) before cross-attention, so its residual starts from "
        "the normalised vector.",
    ),
    BlindCase(
        CHECK,
        "named_src_attn",
        DecSrcAttnName,
        "mistake",
        "I named the cross-attention src_attn (as in the Annotated Transformer), not cross_attn.",
    ),
    BlindCase(
        CHECK,
        "mask_arguments_swapped",
        DecMaskArgsSwapped,
        "mistake",
        "My forward takes (x, memory, src_mask, tgt_mask): the two masks in the other order.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicitBranches,
        "correct",
        "Written out for each mode, with three dropout modules and norms made in a generator.",
    ),
    BlindCase(
        CHECK,
        "project_kv_once",
        DecProjectKv,
        "correct",
        "The memory projected once with project_kv and attended with attend; masks optional.",
    ),
    BlindCase(
        CHECK,
        "keyword_calls_loop",
        DecKeywordCalls,
        "correct",
        "A loop over named sub-layers with a saved residual; attention called with keywords.",
    ),
]
