"""Blind set B9, check_decoder_layer (chapter 13): decoder blocks as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Base(nn.Module):
    """The book's layers under the book's names; each case writes its own ``forward``."""

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

    def _res(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossQueryFromMemory(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._res(x, lambda h: self.cross_attn(memory, h, h, mask=src_mask)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm3)


class DecCrossReadsSelf(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._res(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm3)


class DecCrossNoMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._res(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm3)


class DecSelfNoMask(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._res(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm3)


class DecCrossBeforeSelf(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1)
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm3)


class DecSelfMaskInverted(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self._res(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm3)


class DecNoCrossResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._res(x, self.feed_forward, self.norm3)


class DecOwnCausalOnly(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # my own mask
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self._res(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm3)


class DecPreNormMemoryNormed(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            mem = self.norm2(memory)  # "normalize what goes into the sub-layer"
            x = x + self.dropout(self.cross_attn(self.norm2(x), mem, mem, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._res(x, self.feed_forward, self.norm3)


class DecCrossQueryBeforeResidual(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        h = self.norm1(x) if self.norm_first else x
        a = self.self_attn(h, h, h, mask=tgt_mask)[0]
        x = x + self.dropout(a) if self.norm_first else self.norm1(x + self.dropout(a))
        q = self.norm2(a) if self.norm_first else a  # queries from the self-attention output
        c = self.cross_attn(q, memory, memory, mask=src_mask)[0]
        x = x + self.dropout(c) if self.norm_first else self.norm2(x + self.dropout(c))
        return self._res(x, self.feed_forward, self.norm3)


class DecNorm2ForFfn(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._res(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm2)


class DecCrossUsesTgtMaskRow(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._res(
            x,
            lambda h: self.cross_attn(h, memory, memory, mask=src_mask[:, :, :, :1])[0],
            self.norm2,
        )
        return self._res(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecExplicit(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
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


class DecExtraCausal(_Base):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        mask = tgt_mask & causal  # already causal; one more AND changes nothing
        x = self._res(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._res(x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2)
        return self._res(x, self.feed_forward, self.norm3)


class DecOptionalArgs(_Base):
    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        src_mask: Tensor | None = None,
        cache: object | None = None,
    ) -> Tensor:
        sublayers = [
            (lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in sublayers:
            x = self._res(x, fn, norm)
        return x


CASES = [
    BlindCase(
        CHECK,
        "cross_query_from_memory",
        DecCrossQueryFromMemory,
        "mistake",
        "in the cross-attention I passed the memory as the query and the decoder state as keys "
        "and values (cross_attn(memory, x, x))",
    ),
    BlindCase(
        CHECK,
        "cross_reads_self",
        DecCrossReadsSelf,
        "mistake",
        "copy-paste: the cross-attention attends over the decoder's own x with tgt_mask, the "
        "memory is never read",
    ),
    BlindCase(
        CHECK,
        "cross_no_mask",
        DecCrossNoMask,
        "mistake",
        "the cross-attention gets no src_mask, so source padding is attended to",
    ),
    BlindCase(
        CHECK,
        "self_no_mask",
        DecSelfNoMask,
        "mistake",
        "the masked self-attention gets no tgt_mask, so each position sees the future",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "I put the cross-attention first and the masked self-attention second (with norm1 and "
        "norm2 in that order)",
    ),
    BlindCase(
        CHECK,
        "self_mask_inverted",
        DecSelfMaskInverted,
        "mistake",
        "I passed ~tgt_mask to the self-attention, the PyTorch True-means-blocked convention",
    ),
    BlindCase(
        CHECK,
        "no_cross_residual",
        DecNoCrossResidual,
        "mistake",
        "the cross-attention sub-layer has no residual connection: its output replaces x",
    ),
    BlindCase(
        CHECK,
        "own_causal_only",
        DecOwnCausalOnly,
        "mistake",
        "I built my own tril causal mask and used it instead of tgt_mask, so target padding is "
        "not masked (right only for batches without target padding)",
    ),
    BlindCase(
        CHECK,
        "prenorm_memory_normed",
        DecPreNormMemoryNormed,
        "mistake",
        "pre-norm: I also passed the memory through norm2 before the cross-attention",
    ),
    BlindCase(
        CHECK,
        "cross_query_from_attn_output",
        DecCrossQueryBeforeResidual,
        "mistake",
        "the cross-attention's queries are the raw self-attention output, not the residual "
        "stream after the first Add & Norm",
    ),
    BlindCase(
        CHECK,
        "norm2_for_ffn",
        DecNorm2ForFfn,
        "mistake",
        "the feed-forward sub-layer uses norm2 again instead of norm3 (norm3 never used)",
    ),
    BlindCase(
        CHECK,
        "cross_mask_first_key",
        DecCrossUsesTgtMaskRow,
        "mistake",
        "I sliced the source mask to its first key (src_mask[..., :1]), so only that key's "
        "mask broadcasts over all source positions and padding is never masked",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        DecExplicit,
        "correct",
        "every sub-layer written out in an explicit pre-norm / post-norm if/else",
    ),
    BlindCase(
        CHECK,
        "extra_causal_and",
        DecExtraCausal,
        "correct",
        "I AND the given tgt_mask with my own causal tril mask, which changes nothing",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers_optional_args",
        DecOptionalArgs,
        "correct",
        "a loop over (sub-layer, norm) pairs; masks optional and an unused cache=None argument",
    ),
]
