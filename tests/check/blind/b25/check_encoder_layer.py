"""Blind set B25, check_encoder_layer (chapter 13): one encoder block (self-attention and the
feed-forward network, each with Add & Norm) as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The book's layer names, built as the "Your turn" cell asks; ``forward`` differs."""

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

    def _attn(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class EncNoAttentionResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncAlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncResidualFromNormalized(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self._attn(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFeedForwardFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # mask out what the mask marks
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-2, -1)  # (B, 1, S, 1)
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormsSwapped(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self._attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncParallelSublayers(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return a + self.dropout(self.feed_forward(self.norm2(x)))
        a = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(a + self.dropout(self.feed_forward(x)))


class EncDoubleNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:  # normalise the input and the sum
            x = self.norm1(x + self.dropout(self._attn(self.norm1(x), src_mask)))
            return self.norm2(x + self.dropout(self.feed_forward(self.norm2(x))))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncTupleAdded(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReturnsWeights(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        h = self.norm1(x) if self.norm_first else x
        out, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
        if self.norm_first:
            x = x + self.dropout(out)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(out))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights  # the weights, for plotting


class EncTorchMultihead(nn.Module):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(
            d_model, num_heads, dropout=dropout, batch_first=True
        )
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        pad = ~src_mask[:, 0, 0, :]  # (B, S): True = padding, PyTorch's polarity

        def attn(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h, key_padding_mask=pad, need_weights=False)[0]

        if self.norm_first:
            x = x + self.dropout(attn(self.norm1(x)))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(attn(x)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReluOnFeedForward(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def ffn(h: Tensor) -> Tensor:
            return F.relu(self.feed_forward(h))  # the FFN's activation

        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(ffn(x)))


# ---------------------------------------------------------------- correct variants


class EncAddNormMethod(nn.Module):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _add_norm(self, x: Tensor, f, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.drop(f(norm(x)))
        return norm(x + self.drop(f(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        return self._add_norm(x, self.feed_forward, self.norm2)


class EncExpandedMaskOptional(nn.Module):
    """The padding mask expanded to (B, 1, S, S) first; optional mask and a fused flag."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        fused_attention: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first
        self.fused_attention = fused_attention

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        mask = None
        if src_mask is not None:
            S = x.shape[1]
            mask = src_mask.expand(x.shape[0], 1, S, S)
        if not self.norm_first:
            a, _ = self.self_attn(x, x, x, mask=mask, fused=self.fused_attention)
            x = self.norm1(x + self.dropout(a))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        else:
            h = self.norm1(x)
            a, _ = self.self_attn(h, h, h, mask=mask, fused=self.fused_attention)
            x = x + self.dropout(a)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        return x


class EncProjectAttend(nn.Module):
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
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.p = dropout

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        residual = x
        h = self.norm1(x) if self.norm_first else x
        k, v = self.self_attn.project_kv(h, h)
        h, _ = self.self_attn.attend(h, k, v, mask=src_mask)
        h = residual + F.dropout(h, self.p, self.training)
        x = h if self.norm_first else self.norm1(h)
        residual = x
        h = self.feed_forward(self.norm2(x) if self.norm_first else x)
        h = residual + F.dropout(h, self.p, self.training)
        return h if self.norm_first else self.norm2(h)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttentionResidual,
        "mistake",
        "I forgot to add x back around the self-attention; the feed-forward has its residual.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I wrote the paper's post-norm and never used norm_first.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normalized",
        EncResidualFromNormalized,
        "mistake",
        "In pre-norm I replaced x by norm(x) and added the sub-layer to that, so the residual "
        "stream is normalised.",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        EncFeedForwardFirst,
        "mistake",
        "I ran the feed-forward network before the self-attention.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking the mask marks what is hidden.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskUnused,
        "mistake",
        "I called self_attn(x, x, x) and forgot the mask.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the mask to (B, 1, S, 1), so it hides padded queries instead of keys.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        EncNormsSwapped,
        "mistake",
        "I used norm2 around the attention and norm1 around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "feed_forward_reads_input",
        EncParallelSublayers,
        "mistake",
        "The feed-forward network reads the block's input x instead of the attention's output.",
    ),
    BlindCase(
        CHECK,
        "prenorm_also_normalizes_sum",
        EncDoubleNorm,
        "mistake",
        "In pre-norm I normalised the sub-layer's input and the sum afterwards as well.",
    ),
    BlindCase(
        CHECK,
        "attention_tuple_added",
        EncTupleAdded,
        "mistake",
        "I added self_attn(...) to x directly, forgetting that it returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "returns_attention_weights",
        EncReturnsWeights,
        "mistake",
        "forward returns (x, weights) so that I can plot the attention.",
    ),
    BlindCase(
        CHECK,
        "torch_multihead_attention",
        EncTorchMultihead,
        "mistake",
        "I used nn.MultiheadAttention with key_padding_mask for self_attn instead of the "
        "package's MultiHeadAttention.",
    ),
    BlindCase(
        CHECK,
        "relu_after_feed_forward",
        EncReluOnFeedForward,
        "mistake",
        "I put a ReLU on the feed-forward network's output before the residual.",
    ),
    BlindCase(
        CHECK,
        "add_norm_method",
        EncAddNormMethod,
        "correct",
        "One method for Add & Norm in both modes; positional arguments for the layers.",
    ),
    BlindCase(
        CHECK,
        "expanded_mask_optional_args",
        EncExpandedMaskOptional,
        "correct",
        "The mask expanded to (B, 1, S, S); src_mask optional and a fused_attention flag.",
    ),
    BlindCase(
        CHECK,
        "project_kv_then_attend",
        EncProjectAttend,
        "correct",
        "project_kv and attend instead of calling the module; F.dropout with self.training.",
    ),
]
