"""Blind set B19, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layers under the book's names; each case writes its own forward."""

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


class DecNoSelfMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # mask forgotten
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossReadsSelf(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossNoPadding(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecMasksSwapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecPreNormNormalizesMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        h, m = self.norm2(x), self.norm2(memory)  # normalize everything going into the sub-layer
        x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecNorms23Swapped(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm3)
        return self._sub(x, self.feed_forward, self.norm2)


class DecOneAttentionModule(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the same attention layer again, now on the memory
        x = self._sub(x, lambda h: self.self_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecPreNormFfnNotNormalized(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        if self.norm_first:
            return x + self.dropout(self.feed_forward(x))  # forgot norm3 before the FFN
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecResidualFromBlockInput(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x0 = x
        a = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            b = x0 + self.dropout(self.cross_attn(self.norm2(a), memory, memory, src_mask)[0])
        else:
            b = self.norm2(x0 + self.dropout(self.cross_attn(a, memory, memory, src_mask)[0]))
        return self._sub(b, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecExplicit(_Base):
    def forward(
        self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor, cache=None
    ) -> Tensor:
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


class DecProjectAttend(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)  # projected once

        def cross(h: Tensor) -> Tensor:
            return self.cross_attn.attend(h, mem_k, mem_v, mask=src_mask)[0]

        def self_(h: Tensor) -> Tensor:
            out, _weights = self.self_attn(h, h, h, mask=tgt_mask, need_weights=True)
            return out

        for fn, norm in ((self_, self.norm1), (cross, self.norm2), (self.feed_forward, self.norm3)):
            x = self._sub(x, fn, norm)
        return x


class DecModuleList(nn.Module):
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
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm3 = nn.LayerNorm(d_model)
        self.drops = nn.ModuleList(nn.Dropout(dropout) for _ in range(3))

    def add_norm(self, i: int, x: Tensor, out_of) -> Tensor:
        norm = (self.norm1, self.norm2, self.norm3)[i]
        if self.norm_first:
            return x + self.drops[i](out_of(norm(x)))
        y = x + self.drops[i](out_of(x))
        return norm(y)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        x = self.add_norm(0, x, lambda h: self.self_attn(h, h, h, tgt_mask)[0])
        x = self.add_norm(1, x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0])
        return self.add_norm(2, x, self.feed_forward)


CASES = [
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecNoSelfMask,
        "mistake",
        "I forgot to pass tgt_mask to the self-attention, so each position sees the future.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_reads_self",
        DecCrossReadsSelf,
        "mistake",
        "My cross-attention took keys and values from the decoder's own h, not the memory.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_no_src_mask",
        DecCrossNoPadding,
        "mistake",
        "I did not pass src_mask to the cross-attention, so source padding is attended.",
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
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I inverted tgt_mask (~tgt_mask), thinking True means 'blocked'.",
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
        "norm_first_ignored",
        DecAlwaysPostNorm,
        "mistake",
        "I wrote the post-norm block only and ignored norm_first.",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_memory",
        DecPreNormNormalizesMemory,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "norm2_norm3_swapped",
        DecNorms23Swapped,
        "mistake",
        "I used norm3 for the cross-attention and norm2 for the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "one_attention_for_both",
        DecOneAttentionModule,
        "mistake",
        "I created cross_attn but called self.self_attn for the cross-attention too.",
    ),
    BlindCase(
        CHECK,
        "prenorm_ffn_not_normalized",
        DecPreNormFfnNotNormalized,
        "mistake",
        "In pre-norm I forgot norm3 before the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "cross_residual_from_block_input",
        DecResidualFromBlockInput,
        "mistake",
        "The cross-attention's residual adds the block's input x, not the self-attention "
        "sub-layer's output.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicit,
        "correct",
        "Both modes written out in an if/else, with an extra unused cache=None argument.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        DecProjectAttend,
        "correct",
        "The memory projected once with project_kv and attended with attend; sub-layers "
        "run in a loop; need_weights=True with the weights thrown away.",
    ),
    BlindCase(
        CHECK,
        "module_list_dropouts",
        DecModuleList,
        "correct",
        "Three dropouts in a ModuleList, modules created in another order, masks passed "
        "positionally, mask arguments defaulting to None.",
    ),
]
