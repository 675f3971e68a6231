"""Blind set B8, check_decoder_layer (chapter 13): the decoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_decoder_layer"


class _Layers(nn.Module):
    """The book's layer names, built right; each case below writes its own ``forward``."""

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

    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))


# ---------------------------------------------------------------- mistakes


class DecCrossReadsSelf(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # keys and values from the decoder's own stream: memory never read
        x = self._add_norm(x, lambda h: self.cross_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossNoSrcMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, memory)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecSelfNoMask(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        # the causal mask is only needed in training, I thought, so I left it out here
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecOwnCausalOnly(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # built it myself
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=causal)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecTriuCombined(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        T = x.shape[1]
        no_future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu()
        mask = tgt_mask & no_future  # to be safe, and the triangle is the wrong one
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossFirst(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm1
        )
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecNorm2Reused(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm2)  # norm3 created, never used


class DecPrenormNormsMemory(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        if self.norm_first:
            m = self.norm2(memory)  # pre-norm: I normalised every input of the sub-layer
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, m, m, mask=src_mask)[0])
        else:
            x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, mask=src_mask)[0]))
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecCrossResidualFromInput(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x0 = x
        x1 = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        cross = lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0]  # noqa: E731
        if self.norm_first:
            x2 = x0 + self.dropout(cross(self.norm2(x1)))  # skip from the block's input
        else:
            x2 = self.norm2(x0 + self.dropout(cross(x1)))
        return self._add_norm(x2, self.feed_forward, self.norm3)


class DecTgtMaskInverted(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=~tgt_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecPostnormOnly(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        a = self.self_attn(x, x, x, mask=tgt_mask)[0]
        x = self.norm1(x + self.dropout(a))
        c = self.cross_attn(x, memory, memory, mask=src_mask)[0]
        x = self.norm2(x + self.dropout(c))
        if self.norm_first:  # I only remembered pre-norm for the feed-forward network
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecMemoryAsValueOnly(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        # I used the decoder stream as query and key, the memory as value
        # (only possible when T == S, and then wrong)
        x = self._add_norm(x, lambda h: self.cross_attn(h, memory, h, mask=src_mask)[0], self.norm2)
        return self._add_norm(x, self.feed_forward, self.norm3)


# ---------------------------------------------------------------- correct variants


class DecWrittenOut(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, tgt_mask)[0])
            h = self.norm2(x)
            x = x + self.dropout(self.cross_attn(h, memory, memory, src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm3(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)[0]))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class DecCausalAgain(_Layers):
    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_mask: Tensor,
        src_mask: Tensor,
        cache: object | None = None,
    ) -> Tensor:
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        self_mask = tgt_mask & causal  # already causal; and-ing again changes nothing
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=self_mask)[0], self.norm1)
        x = self._add_norm(
            x, lambda h: self.cross_attn(h, memory, memory, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


class DecSublayerList(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        sublayers = [
            (lambda h: self.self_attn(query=h, key=h, value=h, mask=tgt_mask)[0], self.norm1),
            (
                lambda h: self.cross_attn(query=h, key=memory, value=memory, mask=src_mask)[0],
                self.norm2,
            ),
            (self.feed_forward, self.norm3),
        ]
        for fn, norm in sublayers:
            if self.norm_first:
                x = x + self.dropout(fn(norm(x)))
            else:
                x = norm(x + self.dropout(fn(x)))
        return x


class DecProjectKvOnce(_Layers):
    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=tgt_mask)[0], self.norm1)
        k, v = self.cross_attn.project_kv(memory, memory)  # (B, H, S, Dh), as the book's cache
        x = self._add_norm(
            x, lambda h: self.cross_attn.attend(h, k, v, mask=src_mask)[0], self.norm2
        )
        return self._add_norm(x, self.feed_forward, self.norm3)


def _case(name: str, code: type, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "cross_attention_reads_decoder_stream",
        DecCrossReadsSelf,
        "mistake",
        "My cross-attention takes keys and values from the decoder's own x (with the target "
        "mask), so the memory is never read.",
    ),
    _case(
        "cross_attention_no_source_mask",
        DecCrossNoSrcMask,
        "mistake",
        "Cross-attention reads the memory but I forgot src_mask there, so target positions "
        "attend to the source padding.",
    ),
    _case(
        "self_attention_unmasked",
        DecSelfNoMask,
        "mistake",
        "I called the decoder's self-attention without tgt_mask, so every position sees the "
        "future tokens and the padding.",
    ),
    _case(
        "own_causal_mask_no_padding",
        DecOwnCausalOnly,
        "mistake",
        "I built my own tril causal mask and used it instead of tgt_mask, so target padding is "
        "no longer hidden (only differs on padded target rows).",
    ),
    _case(
        "triu_and_tgt_mask",
        DecTriuCombined,
        "mistake",
        "I and-ed tgt_mask with torch.ones(T, T).triu() 'to block the future', but triu keeps "
        "the future, so each position sees only itself.",
    ),
    _case(
        "cross_before_self",
        DecCrossFirst,
        "mistake",
        "I put cross-attention first (with norm1) and the masked self-attention second.",
    ),
    _case(
        "norm3_unused",
        DecNorm2Reused,
        "mistake",
        "I created norm3 but normalised the feed-forward sub-layer with norm2 again.",
    ),
    _case(
        "prenorm_normalises_memory",
        DecPrenormNormsMemory,
        "mistake",
        "In pre-norm I also passed the memory through norm2 before cross-attention; the memory "
        "should be used as the encoder gives it.",
    ),
    _case(
        "cross_residual_from_block_input",
        DecCrossResidualFromInput,
        "mistake",
        "The cross-attention's residual adds the block's input x instead of the output of the "
        "self-attention sub-layer, which is thereby skipped.",
    ),
    _case(
        "tgt_mask_inverted",
        DecTgtMaskInverted,
        "mistake",
        "I passed ~tgt_mask to self-attention (True = blocked, as PyTorch's masks), so each "
        "position sees only the future.",
    ),
    _case(
        "prenorm_only_in_ffn",
        DecPostnormOnly,
        "mistake",
        "With norm_first I only made the feed-forward sub-layer pre-norm; both attention "
        "sub-layers stay post-norm.",
    ),
    _case(
        "memory_as_key_only",
        DecMemoryAsValueOnly,
        "mistake",
        "In cross-attention I passed the memory as key but the decoder stream as value: "
        "cross_attn(h, memory, h).",
    ),
    _case(
        "written_out",
        DecWrittenOut,
        "correct",
        "Both modes written out line by line, masks passed positionally.",
    ),
    _case(
        "causal_and_again_extra_arg",
        DecCausalAgain,
        "correct",
        "I and tgt_mask with my own tril causal mask (a no-op) and take an unused cache=None "
        "argument.",
    ),
    _case(
        "sublayer_loop",
        DecSublayerList,
        "correct",
        "The three sub-layers in a list of (function, norm) pairs applied in a loop, attention "
        "called with keywords.",
    ),
    _case(
        "project_kv_attend",
        DecProjectKvOnce,
        "correct",
        "Cross-attention through cross_attn.project_kv(memory, memory) and cross_attn.attend, "
        "as the book's cached path does.",
    ),
]
