"""Blind set B34, check_decoder_layer (chapter 13): decoder blocks as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The book's layer names; each reader's class below writes its own forward."""

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

    def _sub(self, x: Tensor, f, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(f(norm(x)))
        return norm(x + self.dropout(f(x)))


# ---------------------------------------------------------------- mistakes


class DecSelfMaskIsSrcMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNoSelfMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossReadsX(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(memory, h, h)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossQueryFromMemory(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # keys from the decoder, the memory as query and value: (B, T, D) only when S == T
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, h, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCrossNoSrcMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecMasksInverted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self._sub(
            x, lambda h: self.cross_attn(h, memory, memory, mask=~src_mask)[0], self.norm2
        )
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
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._sub(x, self.feed_forward, self.norm3)


class DecPreNormMemoryNormed(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.self_attn(x, x, x, mask=tgt_mask)[0])
            x = self.norm2(x + self.cross_attn(x, memory, memory, mask=src_mask)[0])
            return self.norm3(x + self.feed_forward(x))
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=tgt_mask)[0]
        m = self.norm2(memory)  # normalise the memory as well, it is an input too
        x = x + self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0]
        return x + self.feed_forward(self.norm3(x))


class DecOwnCausalWrongDiagonal(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        # I rebuilt the causal part myself; position t must not see itself (?)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril(-1)
        causal[0, 0] = True  # the first row would be empty
        mask = causal & tgt_mask
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecCausalTriu(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).triu()  # upper = allowed?
        mask = tgt_mask & causal
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecNormsShuffled(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
            x = self._sub(
                x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
            )
            return self._sub(x, self.feed_forward, self.norm3)
        # post-norm: I normalised once at the very end only
        x = x + self.self_attn(x, x, x, mask=tgt_mask)[0]
        x = x + self.cross_attn(x, memory, memory, mask=src_mask)[0]
        return self.norm3(x + self.feed_forward(x))


# ---------------------------------------------------------------- correct variants


class DecBookLike(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


class DecExplicitBranches(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.norm_first = norm_first
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop(self.self_attn(h, h, h, tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.drop(self.cross_attn(h, memory, memory, src_mask)[0])
            h = self.norm3(x)
            return x + self.drop(self.feed_forward(h))
        x = self.norm1(x + self.drop(self.self_attn(x, x, x, tgt_mask)[0]))
        x = self.norm2(x + self.drop(self.cross_attn(x, memory, memory, src_mask)[0]))
        return self.norm3(x + self.drop(self.feed_forward(x)))


class DecExtraCausal(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        # tgt_mask is already causal; and-ing a causal mask again changes nothing
        mask = tgt_mask & torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        k, v = self.cross_attn.project_kv(memory, memory)
        x = self._sub(x, lambda h: self.cross_attn.attend(h, k, v, mask=src_mask)[0], self.norm2)
        return self._sub(x, self.feed_forward, self.norm3)


CASES = [
    BlindCase(
        CHECK,
        "self_mask_is_src_mask",
        DecSelfMaskIsSrcMask,
        "mistake",
        "I mixed up the two masks: src_mask on self-attention, tgt_mask on cross",
    ),
    BlindCase(
        CHECK,
        "no_self_mask",
        DecNoSelfMask,
        "mistake",
        "I forgot to pass tgt_mask to the masked self-attention",
    ),
    BlindCase(
        CHECK,
        "cross_reads_x",
        DecCrossReadsX,
        "mistake",
        "cross-attention with the memory as query and x as keys and values",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecCrossQueryFromMemory,
        "mistake",
        "I passed (x, x, memory): keys from the decoder, values from the memory",
    ),
    BlindCase(
        CHECK,
        "cross_no_src_mask",
        DecCrossNoSrcMask,
        "mistake",
        "I did not pass src_mask to the cross-attention",
    ),
    BlindCase(
        CHECK,
        "masks_inverted",
        DecMasksInverted,
        "mistake",
        "I inverted both masks, thinking True means blocked",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "I put cross-attention first, then the masked self-attention",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "I dropped the residual connection around cross-attention",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normed",
        DecPreNormMemoryNormed,
        "mistake",
        "in pre-norm I also passed the memory through norm2",
    ),
    BlindCase(
        CHECK,
        "own_causal_wrong_diagonal",
        DecOwnCausalWrongDiagonal,
        "mistake",
        "I built my own causal mask with tril(-1), so a position does not see itself",
    ),
    BlindCase(
        CHECK,
        "causal_triu",
        DecCausalTriu,
        "mistake",
        "I and-ed tgt_mask with triu instead of tril",
    ),
    BlindCase(
        CHECK,
        "post_norm_once_at_end",
        DecNormsShuffled,
        "mistake",
        "in post-norm I only applied a LayerNorm after the last sub-layer",
    ),
    BlindCase(CHECK, "book_like", DecBookLike, "correct", "a helper for the three sub-layers"),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicitBranches,
        "correct",
        "my own __init__, pre- and post-norm written out, masks passed positionally",
    ),
    BlindCase(
        CHECK,
        "extra_causal_and_attend",
        DecExtraCausal,
        "correct",
        "I and-ed a causal mask in again and used project_kv/attend for cross-attention",
    ),
]
