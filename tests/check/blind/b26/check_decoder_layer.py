"""Blind set B26, check_decoder_layer (chapter 13): one decoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.masks import causal_mask
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layer names, built the way the "Your turn" cell asks."""

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


class DecNoTgtMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # mask forgotten
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCausalOnly(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        causal = causal_mask(x.shape[1], device=x.device)  # the decoder's mask is the causal one
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossNoSrcMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # PyTorch's convention: True = not allowed
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self._sub(
            x, lambda h: self.cross_attn(h, memory, memory, mask=~src_mask)[0], self.norm2
        )
        return self._sub(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossUsesSelfAttn(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossBeforeSelf(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossQueryFromInput(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        y = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the cross-attention's queries are the block's input x, the residual is y
        if self.norm_first:
            q = self.norm2(x)
            y = y + self.dropout(self.cross_attn(q, memory, memory, mask=src_mask)[0])
        else:
            y = self.norm2(y + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(y, self.feed_forward, self.norm3)


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h, mem = self.norm2(x), self.norm2(memory)  # pre-norm: normalize every input
            x = x + self.dropout(self.cross_attn(h, mem, mem, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecNorms23Swapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3)
        return self._sub(x, self.feed_forward, self.norm2)


class DecAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecOneAttention(nn.Module):
    """The same MultiHeadAttention for self- and cross-attention."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = self.self_attn  # attention is attention: one set of weights
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        sub = _Base._sub
        x = sub(self, x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = sub(self, x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return sub(self, x, self.feed_forward, self.norm3)


class DecReturnsTuple(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> tuple:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        cross_w = []

        def cross(h: Tensor) -> Tensor:
            out, w = self.cross_attn(h, memory, memory, mask=src_mask, need_weights=True)
            cross_w.append(w)
            return out

        x = self._sub(x, cross, self.norm2)
        return self._sub(x, self.feed_forward, self.norm3), cross_w[0]  # weights for plotting


# ---------------------------------------------------------------- correct variants


class DecExplicit(nn.Module):
    """Every sublayer written out, three dropouts as in PyTorch's decoder layer."""

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
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout1(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout2(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            x = x + self.dropout3(self.feed_forward(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout1(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout2(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            x = self.norm3(x + self.dropout3(self.feed_forward(x)))
        return x


class DecProjectKv(_Base):
    """Cross-attention's keys and values projected once with project_kv, then attend (fused);
    optional cache and weights arguments, unused."""

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
        cache=None,
        weights=None,
    ) -> Tensor:
        k, v = self.cross_attn.project_kv(memory, memory)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(
            x, lambda h: self.cross_attn.attend(h, k, v, mask=src_mask, fused=True)[0], self.norm2
        )
        return self._sub(x, self.feed_forward, self.norm3)


class DecTable(_Base):
    """A table of (sublayer, norm) and one loop; the self-attention asks for its weights."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        table = (
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask, need_weights=True)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        )
        for fn, norm in table:
            if self.norm_first:
                x = x + self.dropout(fn(norm(x)))
            else:
                x = norm(self.dropout(fn(x)) + x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecNoTgtMask,
        "mistake",
        "I forgot to pass tgt_mask to the self-attention, so each position sees the future.",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask_no_padding",
        DecCausalOnly,
        "mistake",
        "I built the causal mask myself inside the block and ignored tgt_mask, so target "
        "padding is not masked.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_no_src_mask",
        DecCrossNoSrcMask,
        "mistake",
        "The cross-attention gets no mask, so the target reads the source padding.",
    ),
    BlindCase(
        CHECK,
        "masks_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I passed ~tgt_mask and ~src_mask, using PyTorch's True = blocked convention.",
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
        "cross_line_calls_self_attn",
        DecCrossUsesSelfAttn,
        "mistake",
        "I copied the self-attention line for the cross-attention and changed the inputs to the "
        "memory, but it still calls self.self_attn; cross_attn is built and never used.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "I did the cross-attention first and the masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_block_input",
        DecCrossQueryFromInput,
        "mistake",
        "The cross-attention's queries come from the block's input x instead of the output of "
        "the self-attention sublayer.",
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
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "The cross-attention sublayer has no residual connection.",
    ),
    BlindCase(
        CHECK,
        "norm2_norm3_swapped",
        DecNorms23Swapped,
        "mistake",
        "I used norm3 after the cross-attention and norm2 after the feed-forward network.",
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
        "one_attention_for_both",
        DecOneAttention,
        "mistake",
        "I made cross_attn the same MultiHeadAttention as self_attn, one set of weights for both.",
    ),
    BlindCase(
        CHECK,
        "returns_cross_weights_too",
        DecReturnsTuple,
        "mistake",
        "forward returns (x, cross-attention weights) so that I can plot them.",
    ),
    BlindCase(
        CHECK,
        "explicit_three_dropouts",
        DecExplicit,
        "correct",
        "Both modes written out line by line, with three Dropout modules.",
    ),
    BlindCase(
        CHECK,
        "project_kv_then_attend",
        DecProjectKv,
        "correct",
        "The memory projected once with project_kv, then attend with fused=True; optional cache "
        "and weights arguments that are not used.",
    ),
    BlindCase(
        CHECK,
        "sublayer_table",
        DecTable,
        "correct",
        "A table of (sublayer, norm) pairs and one loop; masks passed positionally in one call.",
    ),
]
