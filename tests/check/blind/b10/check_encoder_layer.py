"""Blind set B10, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _attn(self, h: Tensor, mask: Tensor | None) -> Tensor:
        out, _ = self.self_attn(h, h, h, mask=mask)
        return out


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))  # forgot "x +"
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(self.dropout(self._attn(x, src_mask)))  # forgot "x +"
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncNoFfnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
            x = self.norm2(self.dropout(self.feed_forward(x)))
        return x


class EncAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # the paper's formula, written once; norm_first is stored but never read
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # "norm first" read as "the norm comes first in the formula"
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualFromNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout(self._attn(x, src_mask))  # the residual of the normalized x
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormOnSublayerOnly(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # post-norm as "add the normalized sub-layer output"
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, as in nn.MultiheadAttention's key_padding_mask
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])  # mask left out of the call
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): I thought rows were the keys
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
            return x + self.dropout(self.feed_forward(self.norm2(h)))  # block input as residual
        h = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(h)))  # block input as residual


class EncPreNormKeysNotNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            out, _ = self.self_attn(self.norm1(x), x, x, mask=src_mask)  # only the query normed
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncSublayerLoop(_Base):
    """Both sub-layers in one loop over (sub-layer, norm) pairs."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        steps = ((lambda h: self._attn(h, src_mask), self.norm1), (self.feed_forward, self.norm2))
        for sublayer, norm in steps:
            if self.norm_first:
                x = x + self.dropout(sublayer(norm(x)))
            else:
                x = norm(x + self.dropout(sublayer(x)))
        return x


class EncTwoDropoutsProjectKv(nn.Module):
    """Separate dropout modules per sub-layer, attention through project_kv + attend, an
    optional mask and extra keyword arguments."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        **unused,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def _sa_block(self, h: Tensor, mask: Tensor | None) -> Tensor:
        k, v = self.self_attn.project_kv(h, h)
        out, _ = self.self_attn.attend(h, k, v, mask=mask)
        return self.dropout1(out)

    def _ff_block(self, h: Tensor) -> Tensor:
        return self.dropout2(self.feed_forward(h))

    def forward(self, x: Tensor, src_mask: Tensor | None = None, **unused) -> Tensor:
        if self.norm_first:  # the structure of nn.TransformerEncoderLayer.forward
            x = x + self._sa_block(self.norm1(x), src_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask))
            x = self.norm2(x + self._ff_block(x))
        return x


class EncBranchesNamed(_Base):
    """Post-norm and pre-norm as two methods; the mask broadcast to every query explicitly."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.expand(-1, -1, x.shape[1], -1)  # (B, 1, S, S): the same keys per row
        return self._pre(x, mask) if self.norm_first else self._post(x, mask)

    def _post(self, x: Tensor, mask: Tensor) -> Tensor:
        attended = self.self_attn(query=x, key=x, value=x, mask=mask)[0]
        y = self.norm1(self.dropout(attended) + x)
        return self.norm2(self.dropout(self.feed_forward(y)) + y)

    def _pre(self, x: Tensor, mask: Tensor) -> Tensor:
        h = self.norm1(x)
        y = x + self.dropout(self.self_attn(query=h, key=h, value=h, mask=mask)[0])
        return y + self.dropout(self.feed_forward(self.norm2(y)))


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot to add x back after the self-attention sub-layer (no residual connection).",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "The feed-forward sub-layer has no residual: I normalized (or returned) its output alone.",
    ),
    BlindCase(
        CHECK,
        "always_post_norm",
        EncAlwaysPostNorm,
        "mistake",
        "I wrote only the paper's post-norm formula and never looked at norm_first.",
    ),
    BlindCase(
        CHECK,
        "norm_first_inverted",
        EncNormFirstInverted,
        "mistake",
        "I mixed up the flag: norm_first=False gives my pre-norm and True my post-norm.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_residual_from_normed_x",
        EncPreNormResidualFromNormed,
        "mistake",
        "In pre-norm I overwrote x with norm(x) first, so the residual adds the normalized x, "
        "not the raw stream.",
    ),
    BlindCase(
        CHECK,
        "post_norm_on_sublayer_only",
        EncNormOnSublayerOnly,
        "mistake",
        "For post-norm I normalized only the sub-layer's output and added it to x: "
        "x + LayerNorm(Sublayer(x)).",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True marks padding as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskUnused,
        "mistake",
        "I called self_attn(x, x, x) without the mask, so the padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the mask to (B, 1, S, 1), which blocks padded queries instead of padded "
        "keys.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I put the feed-forward network first and the self-attention second.",
    ),
    BlindCase(
        CHECK,
        "norms_swapped",
        EncNormsSwapped,
        "mistake",
        "I used norm2 after the attention and norm1 after the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_block_input",
        EncFfnResidualFromInput,
        "mistake",
        "The residual of the feed-forward sub-layer adds the block's input x instead of the "
        "output of the attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "pre_norm_keys_not_normed",
        EncPreNormKeysNotNormed,
        "mistake",
        "In pre-norm I normalized only the query; keys and values were the raw x.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop",
        EncSublayerLoop,
        "correct",
        "A loop over (sub-layer, norm) pairs with the two formulas inside, instead of a helper.",
    ),
    BlindCase(
        CHECK,
        "two_dropouts_project_kv",
        EncTwoDropoutsProjectKv,
        "correct",
        "Structured like nn.TransformerEncoderLayer: _sa_block/_ff_block helpers, two dropout "
        "modules, attention through project_kv and attend, extra keyword arguments accepted.",
    ),
    BlindCase(
        CHECK,
        "branches_expanded_mask",
        EncBranchesNamed,
        "correct",
        "Post- and pre-norm as separate methods, keyword arguments to self_attn, the residual "
        "added on the other side, and the mask expanded to (B, 1, S, S).",
    ),
]
