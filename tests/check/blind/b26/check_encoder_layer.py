"""Blind set B26, check_encoder_layer (chapter 13): one encoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The book's layer names, built the way the "Your turn" cell asks."""

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


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))  # the sublayer replaces x
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormAddsNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self._attn(x, src_mask))  # residual of the normalized x
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPostNormOnSublayer(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))  # "Add & Norm": norm, then add
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))  # the paper's block only
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # read "norm first" as "the paper's first version"
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # True where padding, to be blocked
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # self-attention over the whole sentence: no mask needed in the encoder
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncNormsSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self._attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncFfnResidualFromInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(h)))  # the block's input added
        h = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(h)))


class EncPreNormOneNormOutput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self._attn(h, src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(h)))  # reuses the first norm
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormFinalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # pre-norm "needs one final LayerNorm"
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncSharedNorm(_Base):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.norm2 = self.norm1  # one LayerNorm is enough, it has no state

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnWidthsSwapped(_Base):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.feed_forward = PositionwiseFeedForward(d_ff, d_model, dropout=dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncOtherNames(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
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


class EncFloatMask(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.float()  # 1.0 = real token, as a number
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncExplicit(nn.Module):
    """Two separate dropouts as in PyTorch's layer, the two modes written out."""

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
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
        self.norm_first = norm_first

    def _sa(self, h: Tensor, mask: Tensor) -> Tensor:
        out, _ = self.self_attn(h, h, h, mask=mask)
        return self.dropout1(out)

    def _ff(self, h: Tensor) -> Tensor:
        return self.dropout2(self.feed_forward(h))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self._sa(self.norm1(x), src_mask)
            x = x + self._ff(self.norm2(x))
        else:
            x = self.norm1(x + self._sa(x, src_mask))
            x = self.norm2(x + self._ff(x))
        return x


class EncSublayerLoop(_Base):
    """One loop over (sublayer, norm) pairs; an optional weights argument."""

    def forward(self, x: Tensor, src_mask: Tensor | None = None, weights=None) -> Tensor:
        steps = [(lambda h: self._attn(h, src_mask), self.norm1), (self.feed_forward, self.norm2)]
        for sublayer, norm in steps:
            if self.norm_first:
                x = x + self.dropout(sublayer(norm(x)))
            else:
                x = norm(x + self.dropout(sublayer(x)))
        return x


class EncProjectAttend(_Base):
    """Keys and values through project_kv, then attend; the fused kernel for the product."""

    def _attn(self, h: Tensor, mask: Tensor | None) -> Tensor:
        k, v = self.self_attn.project_kv(h, h)
        out, _ = self.self_attn.attend(h, k, v, mask=mask, fused=True)
        return out

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        y = self.dropout(self._attn(x, src_mask)).add_(x)  # in place on a fresh tensor
        x = self.norm1(y)
        return self.norm2(x + self.dropout(self.feed_forward(x)))


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I left out the residual connection around self-attention; only the FFN adds its input.",
    ),
    BlindCase(
        CHECK,
        "prenorm_adds_normalized_x",
        EncPreNormAddsNormed,
        "mistake",
        "In pre-norm I wrote x = norm(x) first, so the residual adds the normalized x.",
    ),
    BlindCase(
        CHECK,
        "postnorm_norm_before_add",
        EncPostNormOnSublayer,
        "mistake",
        "For post-norm I normalized the sublayer's output and then added x: x + norm(sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but always computed the paper's post-norm block.",
    ),
    BlindCase(
        CHECK,
        "norm_first_inverted",
        EncNormFirstInverted,
        "mistake",
        "I mixed up the flag: norm_first=False gives pre-norm and True gives post-norm.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking the mask should be True where the padding is blocked.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I thought the encoder sees the whole sentence, so I passed no mask to self-attention.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward sublayer first and self-attention second.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        EncNormsSwapped,
        "mistake",
        "I used norm2 after self-attention and norm1 after the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_block_input",
        EncFfnResidualFromInput,
        "mistake",
        "The second residual adds the block's original input instead of the output of the "
        "attention sublayer.",
    ),
    BlindCase(
        CHECK,
        "prenorm_ffn_reads_first_norm",
        EncPreNormOneNormOutput,
        "mistake",
        "In pre-norm I computed norm1(x) once and fed it to the FFN too (through norm2), "
        "instead of normalizing the updated x.",
    ),
    BlindCase(
        CHECK,
        "prenorm_final_norm_in_block",
        EncPreNormFinalNorm,
        "mistake",
        "In pre-norm I applied norm2 once more at the end of the block, as the final LayerNorm.",
    ),
    BlindCase(
        CHECK,
        "one_shared_layernorm",
        EncSharedNorm,
        "mistake",
        "I made norm2 the same module as norm1, thinking a LayerNorm holds no weights of its own.",
    ),
    BlindCase(
        CHECK,
        "ffn_widths_swapped",
        EncFfnWidthsSwapped,
        "mistake",
        "I built PositionwiseFeedForward(d_ff, d_model) with the two widths the wrong way round.",
    ),
    BlindCase(
        CHECK,
        "own_layer_names",
        EncOtherNames,
        "mistake",
        "Right computation, but I named the layers attn, ffn, ln1 and ln2.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        EncFloatMask,
        "mistake",
        "I turned src_mask into floats (1.0 = real token) before giving it to the attention.",
    ),
    BlindCase(
        CHECK,
        "explicit_two_dropouts",
        EncExplicit,
        "correct",
        "Both modes written out, with two Dropout modules like PyTorch's encoder layer.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop",
        EncSublayerLoop,
        "correct",
        "One loop over the (sublayer, norm) pairs; src_mask defaults to None, an extra weights "
        "argument is ignored.",
    ),
    BlindCase(
        CHECK,
        "project_attend_fused",
        EncProjectAttend,
        "correct",
        "project_kv then attend with fused=True; the post-norm residual added in place.",
    ),
]
