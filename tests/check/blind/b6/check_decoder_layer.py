"""Blind set B6, check_decoder_layer (chapter 13): decoder blocks as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The layers of the exercise with the book's names."""

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

    def add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class CrossAttendsToItself(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # the second sub-layer copied from the first: keys and values from h, not the memory
        x = self.add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.add_norm(x, self.feed_forward, self.norm3)


class PytorchCausalMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        # built my own, as with nn.Transformer: triu(1) marks the future
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=future)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm3)


class NoSelfMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # no tgt_mask
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm3)


class CrossBeforeSelf(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.add_norm(x, self.feed_forward, self.norm3)


class PreNormMemoryToo(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h, m = self.norm2(x), self.norm2(memory)  # normalised the memory with norm2 as well
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
        return self.add_norm(x, self.feed_forward, self.norm3)


class CrossWithoutSrcMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self.add_norm(x, self.feed_forward, self.norm3)


class ResidualFromInput(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # post-norm with a variable per sub-layer, and every residual adds the block's input x
        if self.norm_first:
            a = x + self.dropout(self.self_attn(*[self.norm1(x)] * 3, mask=tgt_mask)[0])
            h = self.norm2(a)
            b = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(b)))
        a = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        b = self.norm2(x + self.dropout(self.cross_attn(a, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(b)))


class Norm2Twice(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm2)  # copy-paste: norm3 never used


class MemoryDetached(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        memory = memory.detach()  # "the encoder's output is fixed input for the decoder"
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm3)


class MasksSwapped(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # called as forward(x, memory, src_mask, tgt_mask) in my head: the masks trade places
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=tgt_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class Explicit(nn.Module):
    """Each sub-layer written out, pre-norm and post-norm in one if/else per sub-layer."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.drop(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.drop(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.drop(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.drop(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.drop(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.drop(self.feed_forward(x)))


class CausalAgainAndProjectedMemory(_Layers):
    """The causal mask ANDed in once more (harmless), the memory projected with project_kv."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        self_mask = tgt_mask & causal  # already causal; to be safe

        def cross(h: Tensor) -> Tensor:
            k, v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh)
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, self_mask)[0], self.norm1)
        x = self.add_norm(x, cross, self.norm2)
        return self.add_norm(x, self.feed_forward, self.norm3)


class SublayerList(_Layers):
    """The three sub-layers as (function, norm) pairs in a loop."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in steps:
            x = self.add_norm(x, fn, norm)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_attends_to_itself",
        CrossAttendsToItself,
        "mistake",
        "I copied the self-attention line for the second sub-layer: cross_attn(h, h, h) with "
        "the target mask, so the memory is never read.",
    ),
    BlindCase(
        CHECK,
        "pytorch_causal_mask",
        PytorchCausalMask,
        "mistake",
        "I ignored tgt_mask and built my own causal mask with triu(ones, 1) as for "
        "nn.Transformer (True = blocked), but the book's attention reads True = may attend, "
        "so each position sees only the future.",
    ),
    BlindCase(
        CHECK,
        "no_self_mask",
        NoSelfMask,
        "mistake",
        "I forgot to pass tgt_mask to the decoder's self-attention, so it sees the future "
        "and the target padding.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        CrossBeforeSelf,
        "mistake",
        "I put cross-attention first and the masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_memory_too",
        PreNormMemoryToo,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before cross-attention, not only "
        "the decoder's stream.",
    ),
    BlindCase(
        CHECK,
        "cross_without_src_mask",
        CrossWithoutSrcMask,
        "mistake",
        "Cross-attention is called without src_mask, so the target attends to source padding.",
    ),
    BlindCase(
        CHECK,
        "residual_from_block_input",
        ResidualFromInput,
        "mistake",
        "With a new variable per sub-layer, every residual adds the block's input x instead "
        "of the previous sub-layer's output.",
    ),
    BlindCase(
        CHECK,
        "norm2_used_twice",
        Norm2Twice,
        "mistake",
        "Copy-paste slip: the feed-forward sub-layer uses norm2 again, and norm3 is never used.",
    ),
    BlindCase(
        CHECK,
        "memory_detached",
        MemoryDetached,
        "mistake",
        "I detached the memory inside the block, so no gradient flows back into the encoder.",
    ),
    BlindCase(
        CHECK,
        "masks_swapped",
        MasksSwapped,
        "mistake",
        "I swapped the masks: self-attention gets src_mask and cross-attention gets tgt_mask.",
    ),
    BlindCase(
        CHECK,
        "explicit_if_else",
        Explicit,
        "correct",
        "Each sub-layer written out in one pre-norm branch and one post-norm branch.",
    ),
    BlindCase(
        CHECK,
        "causal_again_project_kv",
        CausalAgainAndProjectedMemory,
        "correct",
        "I AND a causal mask into tgt_mask once more (it is already causal) and compute "
        "cross-attention through project_kv(memory, memory) and attend.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop",
        SublayerList,
        "correct",
        "The three sub-layers as a list of (function, norm) pairs applied in a loop.",
    ),
]
