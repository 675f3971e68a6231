"""Blind set B33, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _DecoderLayers(nn.Module):
    """The layers every answer below builds, with the book's names."""

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

    def _add_norm(self, x: Tensor, norm: nn.LayerNorm, fn) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsX(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = self._add_norm(x, self.norm2, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0])
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecNoCausal(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # the target's padding is at the end, so only the source mask matters
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecOwnCausalTriu(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=future)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecTgtMaskInverted(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=~src_mask)[0]
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecSrcMaskUnused(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = self._add_norm(x, self.norm2, lambda h: self.cross_attn(h, memory, memory)[0])
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecNoCrossResidual(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        if self.norm_first:
            x = self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
        else:
            x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecCrossBeforeSelf(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, self.norm1, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        x = self._add_norm(x, self.norm2, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecFFNReadsSelfOutput(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        a = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        c = self._add_norm(
            a, self.norm2, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        if self.norm_first:
            return a + self.dropout(self.feed_forward(self.norm3(c)))
        return self.norm3(a + self.dropout(self.feed_forward(c)))


class DecNormFirstIgnored(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecMemoryNormalized(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
            h, m = self.norm2(x), self.norm2(memory)  # normalize what goes in
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecNormInsideResidual(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.self_attn(*[self.norm1(x)] * 3, mask=tgt_mask)[0])
            x = x + self.dropout(self.cross_attn(self.norm2(x), memory, memory, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = x + self.norm1(self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
        x = x + self.norm2(self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return x + self.norm3(self.dropout(self.feed_forward(x)))


class DecMemoryAsValueOnly(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = self._add_norm(
            x, self.norm2, lambda h: self.cross_attn(memory, h, memory, mask=src_mask)[0]
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


class DecPreNormCrossQueryRaw(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=tgt_mask)[0]))
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
            return self.norm3(x + self.dropout(self.feed_forward(x)))
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0])
        return x + self.dropout(self.feed_forward(self.norm3(x)))


class DecNormsShifted(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0])
        x = self._add_norm(
            x, self.norm1, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]
        )
        return self._add_norm(x, self.norm2, self.feed_forward)  # norm3 left over


# ---------------------------------------------------------------- correct variants


class DecExplicit(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop1, self.drop2, self.drop3 = (nn.Dropout(dropout) for _ in range(3))
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask, src_mask):
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


class DecProjectKvAttend(_DecoderLayers):
    def forward(self, x, memory, tgt_mask=None, src_mask=None):
        def self_attention(h):
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=tgt_mask)[0]

        def cross_attention(h):
            k, v = self.cross_attn.project_kv(memory, memory)  # keys and values: the encoder
            return self.cross_attn.attend(h, k, v, mask=src_mask)[0]

        for norm, fn in (
            (self.norm1, self_attention),
            (self.norm2, cross_attention),
            (self.norm3, self.feed_forward),
        ):
            x = self._add_norm(x, norm, fn)
        return x


class DecRedundantCausal(_DecoderLayers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        mask = tgt_mask & causal  # tgt_mask is already causal; this only makes sure
        x = self._add_norm(x, self.norm1, lambda h: self.self_attn(h, h, h, mask=mask)[0])
        x = self._add_norm(
            x,
            self.norm2,
            lambda h: self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)[0],
        )
        return self._add_norm(x, self.norm3, self.feed_forward)


CASES = [
    BlindCase(
        CHECK,
        "cross_attention_reads_x",
        DecCrossReadsX,
        "mistake",
        "In the second sub-layer I passed h as query, key and value (with tgt_mask), like the "
        "first one, so memory is never read.",
    ),
    BlindCase(
        CHECK,
        "self_attention_unmasked",
        DecNoCausal,
        "mistake",
        "I called the decoder self-attention without tgt_mask.",
    ),
    BlindCase(
        CHECK,
        "own_causal_mask_triu",
        DecOwnCausalTriu,
        "mistake",
        "I built my own causal mask with torch.triu(ones, diagonal=1) instead of using tgt_mask.",
    ),
    BlindCase(
        CHECK,
        "masks_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I passed ~tgt_mask and ~src_mask, thinking True means blocked.",
    ),
    BlindCase(
        CHECK,
        "src_mask_unused",
        DecSrcMaskUnused,
        "mistake",
        "I forgot to pass src_mask to the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "no_residual_around_cross",
        DecNoCrossResidual,
        "mistake",
        "I forgot the residual connection around the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "cross_before_self",
        DecCrossBeforeSelf,
        "mistake",
        "I put the cross-attention first and the masked self-attention second.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_self_attention",
        DecFFNReadsSelfOutput,
        "mistake",
        "The feed-forward network reads the cross-attention's output c, but around it I added "
        "the self-attention's output a instead of c.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        DecNormFirstIgnored,
        "mistake",
        "I only wrote the post-norm version; norm_first is stored but unused.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_memory_normalized",
        DecMemoryNormalized,
        "mistake",
        "In pre-norm I passed the memory through norm2 too before the cross-attention.",
    ),
    BlindCase(
        CHECK,
        "norm_inside_residual",
        DecNormInsideResidual,
        "mistake",
        "For post-norm I wrote x + norm(dropout(sublayer(x))).",
    ),
    BlindCase(
        CHECK,
        "memory_as_query",
        DecMemoryAsValueOnly,
        "mistake",
        "I called cross_attn(memory, h, memory): I mixed up which argument is the query.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_cross_query_not_normalized",
        DecPreNormCrossQueryRaw,
        "mistake",
        "In pre-norm I normalized before the self-attention and the FFN but passed x itself to "
        "the cross-attention; norm2 is never used there.",
    ),
    BlindCase(
        CHECK,
        "norms_shifted",
        DecNormsShifted,
        "mistake",
        "I used norm1 for the first two sub-layers and norm2 for the feed-forward; norm3 is "
        "never used.",
    ),
    BlindCase(
        CHECK,
        "explicit_three_dropouts",
        DecExplicit,
        "correct",
        "Both modes written out, one dropout module per sub-layer.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend_loop",
        DecProjectKvAttend,
        "correct",
        "Attention through project_kv and attend, the three sub-layers in a loop of (norm, fn) "
        "pairs; the masks optional.",
    ),
    BlindCase(
        CHECK,
        "redundant_causal_and_keywords",
        DecRedundantCausal,
        "correct",
        "tgt_mask combined with my own tril causal mask (no change), cross-attention called "
        "with keyword arguments.",
    ),
]
