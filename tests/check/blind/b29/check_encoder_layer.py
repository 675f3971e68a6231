"""Blind set B29, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The layers every variant builds, with the book's names."""

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

    def _sa(self, h: Tensor, mask: Tensor | None) -> Tensor:
        out, _ = self.self_attn(h, h, h, mask=mask)
        return out


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._sa(self.norm1(x), src_mask))  # the attention replaces x
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFfnResidual(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncAlwaysPostNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # norm_first is stored but never read
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormFirstInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # "pre-norm is the default nowadays"
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormStreamNormalized(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)  # normalize first, then add
            x = x + self.dropout(self._sa(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormOnBranch(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # post-norm read as "x + LayerNorm(Sublayer(x))"
        x = x + self.norm1(self.dropout(self._sa(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # True = padding, to be hidden
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
            return x + self.dropout(self._sa(self.norm2(x), src_mask))
        x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return self.norm2(x + self.dropout(self._sa(x, src_mask)))


class EncNormsSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self._sa(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncPreNormOnlyQueryNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            out, _ = self.self_attn(h, x, x, mask=src_mask)  # keys and values from the stream
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnResidualFromInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self._sa(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(h)))
        h = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(h)))  # x: the block's input


class EncFunctionalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        D = x.shape[-1]
        if self.norm_first:
            x = x + self.dropout(self._sa(F.layer_norm(x, (D,)), src_mask))
            return x + self.dropout(self.feed_forward(F.layer_norm(x, (D,))))
        x = F.layer_norm(x + self.dropout(self._sa(x, src_mask)), (D,))
        return F.layer_norm(x + self.dropout(self.feed_forward(x)), (D,))


class EncPreNormExtraFinalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # pre-norm needs a final LayerNorm
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncExplicit(_Base):
    """Without the residual function: each branch written out."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            attn_out, _ = self.self_attn(h, h, h, mask=src_mask)
            x = x + self.dropout(attn_out)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            attn_out, _ = self.self_attn(x, x, x, mask=src_mask)
            x = self.norm1(x + self.dropout(attn_out))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncSublayerLoop(nn.Module):
    """The two sub-layers in a loop over (function, norm) pairs; functional dropout; the mask
    optional."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=True)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
        self.p = dropout
        self.norm_first = norm_first

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        def attend(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h, mask=src_mask)[0]

        for sublayer, norm in ((attend, self.norm1), (self.feed_forward, self.norm2)):
            if self.norm_first:
                x = x + F.dropout(sublayer(norm(x)), self.p, self.training)
            else:
                x = norm(x + F.dropout(sublayer(x), self.p, self.training))
        return x


class EncProjectAttend(_Base):
    """Self-attention through project_kv and attend, as the decoder's cache path does."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        h = self.norm1(x) if self.norm_first else x
        k, v = self.self_attn.project_kv(h, h)
        a, _ = self.self_attn.attend(h, k, v, mask=src_mask)
        x = x + self.dropout(a)
        if not self.norm_first:
            x = self.norm1(x)
        h = self.norm2(x) if self.norm_first else x
        x = x + self.dropout(self.feed_forward(h))
        return x if self.norm_first else self.norm2(x)


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual connection around self-attention: the attention output replaces x.",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "I forgot to add x back around the feed-forward network.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but my forward always does post-norm.",
    ),
    BlindCase(
        CHECK,
        "norm_first_inverted",
        EncNormFirstInverted,
        "mistake",
        "I wrote the pre-norm branch under `if not self.norm_first`, so the two modes are swapped.",
    ),
    BlindCase(
        CHECK,
        "prenorm_normalizes_stream",
        EncPreNormStreamNormalized,
        "mistake",
        "In pre-norm I set x = norm(x) first and then added the sub-layer to it, so the residual "
        "stream itself gets normalized.",
    ),
    BlindCase(
        CHECK,
        "postnorm_norm_on_branch",
        EncNormOnBranch,
        "mistake",
        "For post-norm I wrote x + LayerNorm(dropout(sublayer(x))): the LayerNorm on the branch "
        "instead of on the sum.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask to the attention, thinking True must mark the padding to hide.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        EncMaskUnused,
        "mistake",
        "I took src_mask as an argument but called the attention without it.",
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
        "I used norm2 for the attention sub-layer and norm1 for the feed-forward one.",
    ),
    BlindCase(
        CHECK,
        "prenorm_only_query_normed",
        EncPreNormOnlyQueryNormed,
        "mistake",
        "In pre-norm I normalized only the query: self_attn(norm1(x), x, x), keys and values "
        "from the raw stream.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_from_input",
        EncFfnResidualFromInput,
        "mistake",
        "The second residual adds the block's input x instead of the output of the attention "
        "sub-layer.",
    ),
    BlindCase(
        CHECK,
        "functional_layer_norm",
        EncFunctionalNorm,
        "mistake",
        "I created norm1 and norm2 but normalized with F.layer_norm, which has no weight or bias.",
    ),
    BlindCase(
        CHECK,
        "prenorm_extra_final_norm",
        EncPreNormExtraFinalNorm,
        "mistake",
        "In pre-norm I ended the block with norm2(x) again, since pre-norm needs a final "
        "LayerNorm.",
    ),
    BlindCase(
        CHECK,
        "explicit_branches",
        EncExplicit,
        "correct",
        "Without a residual function: the pre-norm and post-norm branches written out with "
        "if/else.",
    ),
    BlindCase(
        CHECK,
        "sublayer_loop",
        EncSublayerLoop,
        "correct",
        "A loop over (sub-layer, norm) pairs, F.dropout with self.training instead of an "
        "nn.Dropout, and src_mask optional.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        EncProjectAttend,
        "correct",
        "Self-attention through project_kv and attend instead of calling the module, and the "
        "norms placed with conditional expressions.",
    ),
]
