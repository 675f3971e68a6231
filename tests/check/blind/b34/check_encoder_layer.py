"""Blind set B34, check_encoder_layer (chapter 13): encoder blocks as readers write them."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(
                self.self_attn(self.norm1(x), self.norm1(x), self.norm1(x), mask=src_mask)[0]
            )
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncIgnoresNormFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstSwapped(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # pre-norm is the default, I thought
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormOnSublayer(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormAlsoAfter(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = self.norm1(x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0]))
            h = self.norm2(x)
            return self.norm2(x + self.dropout(self.feed_forward(h)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0])
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            h = self.norm2(x)
            return x + self.dropout(self.self_attn(h, h, h, mask=src_mask)[0])
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # True where the key must be hidden, like nn.MultiheadAttention
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=blocked)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=blocked)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskNotPassed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): one row per position
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnResidualFromInput(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self.self_attn(*[self.norm1(x)] * 3, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(h)))
        h = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(h)))


class EncPreNormKeysUnnormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.self_attn(self.norm1(x), x, x, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReturnsTuple(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        if self.norm_first:
            h = self.norm1(x)
            out, w = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm2(x))), w
        out, w = self.self_attn(x, x, x, mask=src_mask, need_weights=True)
        x = self.norm1(x + self.dropout(out))
        return self.norm2(x + self.dropout(self.feed_forward(x))), w


# ---------------------------------------------------------------- correct variants


class EncResidualHelper(_Layers):
    def _sub(self, x: Tensor, f, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(f(norm(x)))
        return norm(x + self.dropout(f(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sub(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        return self._sub(x, self.feed_forward, self.norm2)


class EncTwoDropoutsPositional(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            attn_out, _ = self.self_attn(h, h, h, src_mask)
            x = x + self.drop1(attn_out)
            x = x + self.drop2(self.feed_forward(self.norm2(x)))
        else:
            attn_out, _ = self.self_attn(x, x, x, src_mask)
            x = self.norm1(x + self.drop1(attn_out))
            x = self.norm2(x + self.drop2(self.feed_forward(x)))
        return x


class EncExpandedMask(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        B, S, _ = x.shape
        mask = src_mask.expand(B, 1, S, S)  # every query row spelled out
        h = self.norm1(x) if self.norm_first else x
        x = x + self.dropout(self.self_attn(h, h, h, mask=mask, need_weights=True)[0])
        if not self.norm_first:
            x = self.norm1(x)
        h = self.norm2(x) if self.norm_first else x
        x = x + self.dropout(self.feed_forward(h))
        return x if self.norm_first else self.norm2(x)


CASES = [
    BlindCase(
        CHECK,
        "no_attn_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot to add x back around the attention sub-layer",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        EncIgnoresNormFirst,
        "mistake",
        "I always wrote post-norm and never looked at norm_first",
    ),
    BlindCase(
        CHECK,
        "norm_first_swapped",
        EncNormFirstSwapped,
        "mistake",
        "I did pre-norm when norm_first is False and post-norm when it is True",
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer",
        EncNormOnSublayer,
        "mistake",
        "for post-norm I normalised the sub-layer output and then added x",
    ),
    BlindCase(
        CHECK,
        "prenorm_also_after",
        EncPreNormAlsoAfter,
        "mistake",
        "in pre-norm I normalised the input and also the sum afterwards",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_normed",
        EncPreNormResidualFromNormed,
        "mistake",
        "in pre-norm I overwrote x with norm(x), so the residual carries the normed x",
    ),
    BlindCase(
        CHECK,
        "ffn_first",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward network before the self-attention",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask because PyTorch masks use True for blocked",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskNotPassed,
        "mistake",
        "I called self_attn(x, x, x) and forgot the mask",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed src_mask so that it has one row per position",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_input",
        EncFfnResidualFromInput,
        "mistake",
        "the FFN's residual adds the block's input x, not the output of attention",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_unnormed",
        EncPreNormKeysUnnormed,
        "mistake",
        "in pre-norm I normalised only the query, keys and values use raw x",
    ),
    BlindCase(
        CHECK,
        "returns_tuple",
        EncReturnsTuple,
        "mistake",
        "I return (x, attention weights) like MultiHeadAttention does",
    ),
    BlindCase(
        CHECK,
        "residual_helper",
        EncResidualHelper,
        "correct",
        "one helper method for both sub-layers, pre- or post-norm",
    ),
    BlindCase(
        CHECK,
        "two_dropouts_positional",
        EncTwoDropoutsPositional,
        "correct",
        "my own __init__ with two dropout modules, mask passed positionally",
    ),
    BlindCase(
        CHECK,
        "expanded_mask",
        EncExpandedMask,
        "correct",
        "I expanded the mask to (B, 1, S, S) and asked for the weights",
    ),
]
