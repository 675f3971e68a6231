"""Blind cases for check_decoder_layer (chapter 13), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The layers every answer builds the same way; each case writes its own ``forward``."""

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


class SelfAttentionUnmasked(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm3)


class OwnCausalMaskTriu(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        # the causal mask as in nn.Transformer, combined with the given one to be sure
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        mask = tgt_mask & future
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm3)


class CrossAttentionWithoutSourceMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self.add_norm(x, self.feed_forward, self.norm3)


class CrossAttentionOnItself(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # queries, keys and values all from the decoder: memory is never read
        x = self.add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.add_norm(x, self.feed_forward, self.norm3)


class PreNormAlsoNormsMemory(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        h, m = self.norm2(x), self.norm2(memory)  # normalize both inputs of the sub-layer
        x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class CrossBeforeSelf(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self.add_norm(x, self.feed_forward, self.norm3)


class NoResidualAroundFeedForward(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        if self.norm_first:
            return self.dropout(self.feed_forward(self.norm3(x)))
        return self.norm3(self.dropout(self.feed_forward(x)))


class PostNormBeforeAdd(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        def sub(x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
            if self.norm_first:
                return x + self.dropout(fn(norm(x)))
            return x + norm(self.dropout(fn(x)))  # x + LayerNorm(Sublayer(x))

        x = sub(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = sub(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return sub(x, self.feed_forward, self.norm3)


class NormsNamedLn(nn.Module):
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
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ln3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        subs = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.ln1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.ln2),
            (self.feed_forward, self.ln3),
        ]
        for fn, norm in subs:
            x = x + self.dropout(fn(norm(x))) if self.norm_first else norm(x + self.dropout(fn(x)))
        return x


# ---------------------------------------------------------------- correct variants


class HelperMethod(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm3)


class WrittenOut(_Layers):
    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        a, _ = self.self_attn(x, x, x, mask=tgt_mask)
        x = self.norm1(x + self.dropout(a))
        c, _ = self.cross_attn(x, memory, memory, mask=src_mask)
        x = self.norm2(x + self.dropout(c))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class ProjectedMemory(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)  # once, as a cache would
        x = self.add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self.add_norm(
            x, lambda h: self.cross_attn.attend(h, mem_k, mem_v, mask=src_mask)[0], self.norm2
        )
        return self.add_norm(x, self.feed_forward, self.norm3)


CASES = [
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        SelfAttentionUnmasked,
        "mistake",
        "I forgot to pass tgt_mask to the decoder's self-attention, so every position sees "
        "the future (and the target padding)",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask_triu",
        OwnCausalMaskTriu,
        "mistake",
        "I built my own causal mask with torch.triu(ones, diagonal=1) as in nn.Transformer "
        "(True = blocked) and and-ed it with tgt_mask: the causal part has the opposite polarity",
    ),
    BlindCase(
        CHECK,
        "cross_attention_without_source_mask",
        CrossAttentionWithoutSourceMask,
        "mistake",
        "I did not pass src_mask to the cross-attention, so the decoder attends to the "
        "source's padding",
    ),
    BlindCase(
        CHECK,
        "cross_attention_on_itself",
        CrossAttentionOnItself,
        "mistake",
        "my cross-attention takes keys and values from the decoder's own x (with tgt_mask) "
        "instead of from memory: the memory is never read",
    ),
    BlindCase(
        CHECK,
        "pre_norm_also_norms_memory",
        PreNormAlsoNormsMemory,
        "mistake",
        "in pre-norm I applied norm2 to the memory as well as to x before the cross-attention",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        CrossBeforeSelf,
        "mistake",
        "I put the cross-attention first and the masked self-attention second: the sub-layers "
        "are in the wrong order",
    ),
    BlindCase(
        CHECK,
        "no_residual_around_feed_forward",
        NoResidualAroundFeedForward,
        "mistake",
        "the third sub-layer has no residual connection: the FFN's output replaces x "
        "instead of being added to it",
    ),
    BlindCase(
        CHECK,
        "post_norm_before_add",
        PostNormBeforeAdd,
        "mistake",
        "in post-norm I normalized the sub-layer's output and then added x, x + "
        "LayerNorm(Sublayer(x)), instead of LayerNorm(x + Sublayer(x))",
    ),
    BlindCase(
        CHECK,
        "norms_named_ln",
        NormsNamedLn,
        "mistake",
        "I named the LayerNorms ln1, ln2, ln3 instead of norm1, norm2, norm3",
    ),
    BlindCase(
        CHECK,
        "helper_method",
        HelperMethod,
        "correct",
        "one add_norm helper method for the three sub-layers, each passed as a lambda",
    ),
    BlindCase(
        CHECK,
        "written_out",
        WrittenOut,
        "correct",
        "the three sub-layers written out for each mode; both masks default to None",
    ),
    BlindCase(
        CHECK,
        "projected_memory",
        ProjectedMemory,
        "correct",
        "the memory projected once with cross_attn.project_kv and the cross-attention done "
        "with cross_attn.attend",
    ),
]
