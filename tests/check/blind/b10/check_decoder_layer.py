"""Blind set B10, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The layers with the book's names; each case writes its own ``forward``."""

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

    def _add_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))
        return norm(x + self.dropout(sublayer(x)))


# ---------------------------------------------------------------- mistakes


class DecSelfAttnUnmasked(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)  # no tgt_mask
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossUnmasked(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # "the memory has no future, so cross-attention needs no mask"
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~tgt_mask  # True = blocked, as nn.Transformer's tgt_mask
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=blocked)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecSrcMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x,
            lambda h: self.cross_attn(h, memory, memory, mask=src_mask == 0)[0],  # padding = True
            self.norm2,
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossReadsItself(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # copied the line above and changed only the layer: keys and values are still h
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            h = self.norm2(x)
            x = self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        m = self.norm2(memory)  # pre-norm: every input of the sub-layer normalized, memory too
        x = x + self.dropout(self.cross_attn(self.norm2(x), m, m, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecOwnCausalTriu(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        # to be safe I added my own causal mask on top of tgt_mask (with triu, not tril)
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).triu()
        mask = tgt_mask | causal
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNormsShifted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # norm1 for both attentions, norm3 for the FFN; norm2 never used
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        x = self.norm1(x)
        x = x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0])
        x = self.norm2(x)
        x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        x = self.norm3(x)
        return x + self.dropout(self.feed_forward(x))


# ---------------------------------------------------------------- correct variants


class DecExplicitBranches(_Base):
    """Written out line by line for each mode, no helper; masks passed as keyword arguments."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(query=h, key=h, value=h, mask=tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(
                self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)[0]
            )
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecProjectOnce(nn.Module):
    """Memory keys/values through project_kv + attend, one dropout per sub-layer, the three
    sub-layers as a list, and optional masks."""

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
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drops = nn.ModuleList(nn.Dropout(dropout) for _ in range(3))

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
    ) -> Tensor:
        mem_k, mem_v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh)

        def self_block(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h, mask=tgt_mask)[0]

        def cross_block(h: Tensor) -> Tensor:
            return self.cross_attn.attend(h, mem_k, mem_v, mask=src_mask)[0]

        blocks = [self_block, cross_block, self.feed_forward]
        norms = [self.norm1, self.norm2, self.norm3]
        for block, norm, drop in zip(blocks, norms, self.drops, strict=True):
            x = x + drop(block(norm(x))) if self.norm_first else norm(x + drop(block(x)))
        return x


class DecMasksCombinedAgain(_Base):
    """ANDs the causal mask into tgt_mask once more (harmless, it is already causal) and keeps
    the sum and the norm in separate lines."""

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[-2]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        self_mask = tgt_mask & causal  # (B, 1, T, T)
        residual = x
        h = self.norm1(x) if self.norm_first else x
        y = residual + self.dropout(self.self_attn(h, h, h, mask=self_mask)[0])
        y = y if self.norm_first else self.norm1(y)
        residual = y
        h = self.norm2(y) if self.norm_first else y
        z = residual + self.dropout(self.cross_attn(h, memory, memory, mask=src_mask)[0])
        z = z if self.norm_first else self.norm2(z)
        residual = z
        h = self.norm3(z) if self.norm_first else z
        out = residual + self.dropout(self.feed_forward(h))
        return out if self.norm_first else self.norm3(out)


CASES = [
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecSelfAttnUnmasked,
        "mistake",
        "I left tgt_mask out of the self-attention call, so a position sees the future.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_unmasked",
        DecCrossUnmasked,
        "mistake",
        "No mask on the cross-attention: I thought the memory needs none, but its padding is "
        "then attended to.",
    ),
    BlindCase(
        CHECK,
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I passed ~tgt_mask, as nn.Transformer wants True for blocked positions.",
    ),
    BlindCase(
        CHECK,
        "src_mask_inverted",
        DecSrcMaskInverted,
        "mistake",
        "In the cross-attention I passed src_mask == 0, so padding is True.",
    ),
    BlindCase(
        CHECK,
        "cross_attention_reads_itself",
        DecCrossReadsItself,
        "mistake",
        "I copied the self-attention line for the cross-attention and changed only the layer: "
        "its keys and values are the decoder's own h, not the memory.",
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
        "The cross-attention sub-layer has no residual connection: its output replaces x.",
    ),
    BlindCase(
        CHECK,
        "always_post_norm",
        DecAlwaysPostNorm,
        "mistake",
        "I wrote the post-norm formula only; norm_first=True gives post-norm too.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_memory_normed",
        DecPreNormMemoryNormed,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask_triu",
        DecOwnCausalTriu,
        "mistake",
        "I built a causal mask myself with triu and combined it with tgt_mask using |, which "
        "opens the future.",
    ),
    BlindCase(
        CHECK,
        "norm1_reused_for_cross",
        DecNormsShifted,
        "mistake",
        "I used norm1 for both attention sub-layers and never used norm2.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_from_normed_x",
        DecPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I wrote x = norm(x) before each sub-layer, so each residual adds the "
        "normalized stream.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicitBranches,
        "correct",
        "Both modes written out line by line without a helper, with keyword arguments.",
    ),
    BlindCase(
        CHECK,
        "project_memory_once",
        DecProjectOnce,
        "correct",
        "Memory projected once with cross_attn.project_kv and attended with attend; three "
        "dropout modules in a ModuleList, the sub-layers in a loop, masks optional.",
    ),
    BlindCase(
        CHECK,
        "causal_anded_again",
        DecMasksCombinedAgain,
        "correct",
        "ANDs a tril causal mask into tgt_mask again (it changes nothing) and writes each "
        "residual as a separate variable.",
    ),
]
