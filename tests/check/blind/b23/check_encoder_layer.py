"""Blind set B23, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The layers as the chapter names them; each case writes its own ``forward``."""

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

    def _attn(self, h: Tensor, src_mask: Tensor) -> Tensor:
        out, _ = self.self_attn(h, h, h, mask=src_mask)
        return out


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))  # no "x +"
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))  # no "x +"
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormBeforeAdd(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # post-norm: I normalised the sub-layer's output and then added the input
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormAddsNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._attn(h, src_mask))  # residual from the normed x
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoMask(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def attn(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h)[0]  # forgot mask=src_mask

        if self.norm_first:
            x = x + self.dropout(attn(self.norm1(x)))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(attn(x)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # I thought the mask had to say which keys to hide, as in PyTorch
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): I masked the padded rows
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._attn(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._attn(x, src_mask)))


class EncAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # self.norm_first is stored but never read
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormKeysUnnormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])  # keys, values: x
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormAlsoNormsOutput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            # normalised both going into the branch and after the sum
            x = self.norm1(x + self.dropout(self._attn(self.norm1(x), src_mask)))
            return self.norm2(x + self.dropout(self.feed_forward(self.norm2(x))))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormFfnUnnormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return self.norm2(x + self.dropout(self.feed_forward(x)))  # post-norm for the FFN
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnArgsSwapped(_Base):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.feed_forward = PositionwiseFeedForward(d_ff, d_model, dropout)  # (d_ff, d_model)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncAttnTwiceInResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self._attn(h, src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # post-norm: I fed the attention output, not the normed sum, to the FFN's residual
        a = self.dropout(self._attn(x, src_mask))
        x = self.norm1(x + a)
        return self.norm2(a + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncExplicitBranches(nn.Module):
    """Written out without a helper; the dropout module is called ``drop``."""

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

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            attn_out, _ = self.self_attn(h, h, h, mask=src_mask)
            x = x + self.drop(attn_out)
            x = x + self.drop(self.feed_forward(self.norm2(x)))
        else:
            attn_out, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self.norm1(x + self.drop(attn_out))
            x = self.norm2(x + self.drop(self.feed_forward(x)))
        return x


class EncLoopOverSublayers(_Base):
    """One loop over (sub-layer, norm) pairs; the mask broadcast to (B, 1, S, S) by hand."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        mask = src_mask.expand(-1, -1, S, -1)  # (B, 1, S, S)
        sublayers = [
            (lambda h: self.self_attn(h, h, h, mask=mask)[0], self.norm1),
            (self.feed_forward, self.norm2),
        ]
        for sublayer, norm in sublayers:
            if self.norm_first:
                x = x + self.dropout(sublayer(norm(x)))
            else:
                x = norm(x + self.dropout(sublayer(x)))
        return x


class EncProjectKvAttend(_Base):
    """Self-attention through ``project_kv`` and ``attend``; the sum written with ``add_`` on a
    new tensor."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        h = self.norm1(x) if self.norm_first else x
        k, v = self.self_attn.project_kv(h, h)
        a, _ = self.self_attn.attend(h, k, v, mask=src_mask)
        y = self.dropout(a).add(x)  # a new tensor: x itself is not touched
        x = y if self.norm_first else self.norm1(y)
        h = self.norm2(x) if self.norm_first else x
        y = x + self.dropout(self.feed_forward(h))
        return y if self.norm_first else self.norm2(y)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual connection around self-attention: its output replaces x",
    ),
    BlindCase(
        CHECK,
        "post_norm_on_branch_before_add",
        EncNormBeforeAdd,
        "mistake",
        "in post-norm mode I put the LayerNorm on the sub-layer output and then added x",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_from_normed",
        EncPreNormAddsNormed,
        "mistake",
        "in pre-norm I added the sub-layer output to norm(x) instead of to x",
    ),
    BlindCase(
        CHECK,
        "padding_mask_not_passed",
        EncNoMask,
        "mistake",
        "I called self_attn(h, h, h) and forgot to pass src_mask",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True meant 'blocked' as in nn.MultiheadAttention",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the mask to (B, 1, S, 1), so it hides padded queries instead of keys",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I applied the feed-forward network first and self-attention second",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but always computed the post-norm block",
    ),
    BlindCase(
        CHECK,
        "pre_norm_keys_values_unnormed",
        EncPreNormKeysUnnormed,
        "mistake",
        "in pre-norm I normalised only the queries; keys and values came from the raw x",
    ),
    BlindCase(
        CHECK,
        "pre_norm_also_normalises_sum",
        EncPreNormAlsoNormsOutput,
        "mistake",
        "in pre-norm I normalised the branch input and also the sum after the residual",
    ),
    BlindCase(
        CHECK,
        "pre_norm_ffn_post_norm",
        EncPreNormFfnUnnormed,
        "mistake",
        "in pre-norm mode only the attention sub-layer is pre-norm; the FFN kept post-norm",
    ),
    BlindCase(
        CHECK,
        "ffn_sizes_swapped",
        EncFfnArgsSwapped,
        "mistake",
        "I built PositionwiseFeedForward(d_ff, d_model): the two sizes in the wrong order",
    ),
    BlindCase(
        CHECK,
        "post_norm_ffn_residual_from_attention",
        EncAttnTwiceInResidual,
        "mistake",
        "in post-norm the FFN's residual added the attention output instead of the normed x",
    ),
    BlindCase(
        CHECK,
        "explicit_branches_drop_name",
        EncExplicitBranches,
        "correct",
        "if/else written out with no helper; my dropout module is called drop",
    ),
    BlindCase(
        CHECK,
        "loop_over_sublayers_expanded_mask",
        EncLoopOverSublayers,
        "correct",
        "one loop over (sub-layer, norm) pairs; I expanded the mask to (B, 1, S, S) myself",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        EncProjectKvAttend,
        "correct",
        "self-attention through project_kv and attend; the residual sum written with .add",
    ),
]
