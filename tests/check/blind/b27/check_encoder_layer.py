"""Blind set B27, check_encoder_layer (chapter 13): one encoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _sa(self, h: Tensor, mask: Tensor) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class EncNoAttentionResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._sa(self.norm1(x), src_mask))  # the attention replaces x
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormOnBranch(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # "Add & Norm": I normalized the sub-layer's output, then added
        x = x + self.norm1(self.dropout(self._sa(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormNormalizesStream(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)  # normalize first ...
            x = x + self.dropout(self._sa(x, src_mask))  # ... and add to the normalized x
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFeedForwardFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._sa(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._sa(x, src_mask)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # as nn.MultiheadAttention wants it: True = padding
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskNotPassed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncIgnoresNormFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstBackwards(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # pre-norm is the default, I thought
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncOneNormTwice(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        norm = self.norm1  # both sub-layers have the same d_model, so one LayerNorm does
        if self.norm_first:
            x = x + self.dropout(self._sa(norm(x), src_mask))
            return x + self.dropout(self.feed_forward(norm(x)))
        x = norm(x + self.dropout(self._sa(x, src_mask)))
        return norm(x + self.dropout(self.feed_forward(x)))


class EncSkipFromBlockInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(h)))  # residual from x
        h = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(h)))  # residual from the input


class EncPreNormRawKeys(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])  # keys from x
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskSqueezed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.squeeze(1)  # (B, 1, S): one row of keys per sentence
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReluAtEnd(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return torch.relu(x)  # a block ends with its activation


class EncFinalNormInBlock(_Base):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.final_norm = nn.LayerNorm(d_model)  # "a pre-norm stack ends with one more LayerNorm"

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.final_norm(x)
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncForgotTuple(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h, mask=src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask=src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncOwnNames(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.ln1(x)
            x = x + self.drop(self.attn(h, h, h, mask=src_mask)[0])
            return x + self.drop(self.ffn(self.ln2(x)))
        x = self.ln1(x + self.drop(self.attn(x, x, x, mask=src_mask)[0]))
        return self.ln2(x + self.drop(self.ffn(x)))


class EncFfnWidthDModel(_Base):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.feed_forward = PositionwiseFeedForward(d_model, d_model, dropout=dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncOwnResidual(nn.Module):
    """Written out with a small method of its own; ``src_mask`` may be left out."""

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
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _add_norm(self, x, fn, norm):
        if self.norm_first:
            return x + self.drop(fn(norm(x)))
        return norm(x + self.drop(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        x = self._add_norm(x, lambda h: self.self_attn(h, h, h, mask=src_mask)[0], self.norm1)
        return self._add_norm(x, self.feed_forward, self.norm2)


class EncProjectKvAttend(_Base):
    """Self-attention through ``project_kv`` and ``attend``; the two modes as two methods."""

    def _post(self, x: Tensor, src_mask: Tensor) -> Tensor:
        k, v = self.self_attn.project_kv(x, x)
        attn_out, _ = self.self_attn.attend(x, k, v, src_mask)
        x = self.norm1(x + self.dropout(attn_out))
        ff = self.feed_forward(x)
        return self.norm2(x + self.dropout(ff))

    def _pre(self, x: Tensor, src_mask: Tensor) -> Tensor:
        h = self.norm1(x)
        k, v = self.self_attn.project_kv(h, h)
        attn_out, _ = self.self_attn.attend(h, k, v, src_mask)
        x = x + self.dropout(attn_out)
        return x + self.dropout(self.feed_forward(self.norm2(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        return self._pre(x, src_mask) if self.norm_first else self._post(x, src_mask)


class EncFusedLoop(nn.Module):
    """The two sub-layers in a loop over (sublayer, norm) pairs; fused attention by default,
    with an extra ``fused`` argument."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        fused: bool = True,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.fused = fused
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def attend(h: Tensor) -> Tensor:
            out, _ = self.self_attn(h, h, h, src_mask, fused=self.fused)
            return out

        for sublayer, norm in ((attend, self.norm1), (self.feed_forward, self.norm2)):
            if self.norm_first:
                x = x + self.dropout(sublayer(norm(x)))
            else:
                x = norm(x + self.dropout(sublayer(x)))
        return x


class EncFunctionalNorm(_Base):
    """LayerNorm called through ``F.layer_norm`` with the modules' own weights."""

    def _ln(self, norm: nn.LayerNorm, x: Tensor) -> Tensor:
        return nn.functional.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = self._ln(self.norm1, x)
            x = x + self.dropout(self.self_attn(a, a, a, mask=src_mask)[0])
            x = x + self.dropout(self.feed_forward(self._ln(self.norm2, x)))
            return x
        a = self.self_attn(x, x, x, mask=src_mask)[0]
        x = self._ln(self.norm1, self.dropout(a) + x)
        return self._ln(self.norm2, self.dropout(self.feed_forward(x)) + x)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttentionResidual,
        "mistake",
        "I forgot the residual connection around the self-attention: its output replaces x.",
    ),
    BlindCase(
        CHECK,
        "norm_on_branch",
        EncNormOnBranch,
        "mistake",
        "In post-norm I normalized the sub-layer's output and then added x: x + norm(sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_stream",
        EncPreNormNormalizesStream,
        "mistake",
        "For pre-norm I wrote x = norm(x) first and then x = x + sublayer(x), so the residual "
        "stream itself is normalized.",
    ),
    BlindCase(
        CHECK,
        "feed_forward_first",
        EncFeedForwardFirst,
        "mistake",
        "I put the feed-forward network before the self-attention.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True should mark the padding as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskNotPassed,
        "mistake",
        "I called self_attn(x, x, x) and forgot to pass src_mask.",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        EncIgnoresNormFirst,
        "mistake",
        "I stored norm_first but always compute post-norm.",
    ),
    BlindCase(
        CHECK,
        "norm_first_backwards",
        EncNormFirstBackwards,
        "mistake",
        "I read the flag the wrong way round: pre-norm when norm_first is False.",
    ),
    BlindCase(
        CHECK,
        "one_norm_twice",
        EncOneNormTwice,
        "mistake",
        "I made norm1 and norm2 but used norm1 for both sub-layers, since they have the same size.",
    ),
    BlindCase(
        CHECK,
        "skip_from_block_input",
        EncSkipFromBlockInput,
        "mistake",
        "The residual around the feed-forward network adds the block's input x instead of the "
        "output of the attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "prenorm_raw_keys",
        EncPreNormRawKeys,
        "mistake",
        "In pre-norm only the queries are normalized: self_attn(norm(x), x, x).",
    ),
    BlindCase(
        CHECK,
        "mask_squeezed",
        EncMaskSqueezed,
        "mistake",
        "I squeezed src_mask to (B, 1, S) before passing it, which broadcasts the batch onto "
        "the heads.",
    ),
    BlindCase(
        CHECK,
        "relu_at_end",
        EncReluAtEnd,
        "mistake",
        "I applied a ReLU to the block's output, as at the end of a layer.",
    ),
    BlindCase(
        CHECK,
        "final_norm_in_block",
        EncFinalNormInBlock,
        "mistake",
        "In pre-norm mode I end every block with one more LayerNorm, which belongs at the end "
        "of the stack.",
    ),
    BlindCase(
        CHECK,
        "forgot_tuple",
        EncForgotTuple,
        "mistake",
        "I added the result of self_attn to x, forgetting that it returns (out, weights).",
    ),
    BlindCase(
        CHECK,
        "own_layer_names",
        EncOwnNames,
        "mistake",
        "I named the layers attn, ffn, ln1 and ln2 instead of the book's names.",
    ),
    BlindCase(
        CHECK,
        "ffn_width_d_model",
        EncFfnWidthDModel,
        "mistake",
        "I built the feed-forward network with hidden width d_model instead of d_ff.",
    ),
    BlindCase(
        CHECK,
        "own_residual_method",
        EncOwnResidual,
        "correct",
        "A method of my own for Add & Norm; src_mask defaults to None.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        EncProjectKvAttend,
        "correct",
        "Attention through project_kv and attend, with post-norm and pre-norm in two methods.",
    ),
    BlindCase(
        CHECK,
        "fused_in_a_loop",
        EncFusedLoop,
        "correct",
        "A loop over (sub-layer, norm) pairs, fused attention, and an extra fused=True argument.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        EncFunctionalNorm,
        "correct",
        "F.layer_norm with the LayerNorm modules' weights, and the sums written sub-layer first.",
    ),
]
