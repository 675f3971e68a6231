"""Blind set B24, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Encoder(nn.Module):
    """The layers every reader builds the same way; the variants differ in ``forward``."""

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
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncNoFfnResidual(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(self.dropout(self.feed_forward(x)))
        return x


class EncNormOnSublayerOnly(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:  # "Add & Norm": I normalised the sub-layer's output, then added
            x = x + self.norm1(self.dropout(self._sa(x, src_mask)))
            x = x + self.norm2(self.dropout(self.feed_forward(x)))
        return x


class EncPrenormResidualFromNormed(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._sa(h, src_mask))
            h = self.norm2(x)
            x = h + self.dropout(self.feed_forward(h))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncIgnoresNormFirst(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPrenormAlsoPostnorm(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x + self.dropout(self._sa(self.norm1(x), src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(self.norm2(x))))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncFfnFirst(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
        else:
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
        return x


class EncMaskInverted(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # as nn.MultiheadAttention wants it: True = padding
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), blocked))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, blocked)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncMaskNotPassed(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, h, h)[0])
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.self_attn(x, x, x)[0]))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncNorm1Reused(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm1(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm1(x + self.dropout(self.feed_forward(x)))
        return x


class EncPrenormRawQueries(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(x, h, h, mask=src_mask)[0])
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncFfnResidualFromInput(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = x + self.dropout(self._sa(self.norm1(x), src_mask))
            out = x + self.dropout(self.feed_forward(self.norm2(a)))
        else:
            a = self.norm1(x + self.dropout(self._sa(x, src_mask)))
            out = self.norm2(x + self.dropout(self.feed_forward(a)))
        return out


class EncCausalToo(_Encoder):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        causal = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()
        mask = src_mask & causal  # (B, 1, S, S)
        if self.norm_first:
            x = x + self.dropout(self._sa(self.norm1(x), mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self._sa(x, mask)))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x


class EncFfnReadsSublayerOutput(_Encoder):
    """The FFN reads the sub-layer's output, not the stream."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = self._sa(self.norm1(x), src_mask)
            x = x + self.dropout(a)
            x = x + self.dropout(self.feed_forward(self.norm2(a)))
        else:
            a = self._sa(x, src_mask)
            x = self.norm1(x + self.dropout(a))
            x = self.norm2(x + self.dropout(self.feed_forward(a)))
        return x


# ---------------------------------------------------------------- correct variants


class EncTwoMethods(nn.Module):
    """Separate dropouts per sub-layer, pre- and post-norm as two methods."""

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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _post(self, x: Tensor, mask: Tensor | None) -> Tensor:
        attn_out, _ = self.self_attn(x, x, x, mask=mask)
        y = self.norm1(x + self.drop1(attn_out))
        return self.norm2(y + self.drop2(self.feed_forward(y)))

    def _pre(self, x: Tensor, mask: Tensor | None) -> Tensor:
        h = self.norm1(x)
        attn_out, _ = self.self_attn(h, h, h, mask=mask)
        y = x + self.drop1(attn_out)
        return y + self.drop2(self.feed_forward(self.norm2(y)))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        return self._pre(x, src_mask) if self.norm_first else self._post(x, src_mask)


class EncFusedProjectKv(_Encoder):
    """Through ``project_kv`` and ``attend`` with the fused kernel."""

    def forward(self, x: Tensor, src_mask: Tensor, **unused) -> Tensor:
        h = self.norm1(x) if self.norm_first else x
        k, v = self.self_attn.project_kv(h, h)
        attn_out, _ = self.self_attn.attend(h, k, v, mask=src_mask, fused=True)
        x = x + self.dropout(attn_out)
        if not self.norm_first:
            x = self.norm1(x)
        h = self.norm2(x) if self.norm_first else x
        x = x + self.dropout(self.feed_forward(h))
        return x if self.norm_first else self.norm2(x)


class EncSublayerHelper(_Encoder):
    """A generic sub-layer helper with the norms and sub-layers in lists."""

    def _add_norm(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        steps = [
            (lambda h: self.self_attn(h, h, h, mask=src_mask, need_weights=True)[0], self.norm1),
            (self.feed_forward, self.norm2),
        ]
        for fn, norm in steps:
            x = self._add_norm(x, fn, norm)
        return x


class EncMaskExpanded(_Encoder):
    """The mask broadcast to every query row first, then handed on as a bool tensor."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        B, S, _ = x.shape
        mask = src_mask.expand(B, 1, S, S).clone()  # (B, 1, S, S), still True = may attend
        residual = x
        h = self.norm1(x) if self.norm_first else x
        x = residual + self.dropout(self.self_attn(h, h, h, mask)[0])
        if not self.norm_first:
            x = self.norm1(x)
        residual = x
        h = self.norm2(x) if self.norm_first else x
        x = residual + self.dropout(self.feed_forward(h))
        if not self.norm_first:
            x = self.norm2(x)
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot to add x back around the self-attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "The feed-forward sub-layer has no residual connection: its output replaces the stream.",
    ),
    BlindCase(
        CHECK,
        "postnorm_normalises_sublayer_only",
        EncNormOnSublayerOnly,
        "mistake",
        "Post-norm written as x + norm(sublayer(x)): the LayerNorm on the sub-layer's output, "
        "not on the sum.",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_from_normed_x",
        EncPrenormResidualFromNormed,
        "mistake",
        "Pre-norm: I overwrote h = norm(x) and added the sub-layer to h instead of to x.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncIgnoresNormFirst,
        "mistake",
        "I stored norm_first but always compute the post-norm block.",
    ),
    BlindCase(
        CHECK,
        "prenorm_and_postnorm",
        EncPrenormAlsoPostnorm,
        "mistake",
        "In pre-norm mode I normalise the input and also the sum afterwards.",
    ),
    BlindCase(
        CHECK,
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "The feed-forward sub-layer comes first, self-attention second.",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True must mark the padding as in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "mask_not_passed",
        EncMaskNotPassed,
        "mistake",
        "I called self_attn(x, x, x) and never passed src_mask, so padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "norm1_reused",
        EncNorm1Reused,
        "mistake",
        "norm2 is built but I used norm1 around both sub-layers.",
    ),
    BlindCase(
        CHECK,
        "prenorm_queries_not_normalised",
        EncPrenormRawQueries,
        "mistake",
        "Pre-norm: keys and values come from norm1(x) but the queries from the raw x.",
    ),
    BlindCase(
        CHECK,
        "ffn_residual_adds_block_input",
        EncFfnResidualFromInput,
        "mistake",
        "The FFN's residual adds the block's input x, not the stream after self-attention.",
    ),
    BlindCase(
        CHECK,
        "causal_mask_in_encoder",
        EncCausalToo,
        "mistake",
        "I combined src_mask with a causal mask, so the encoder cannot look ahead.",
    ),
    BlindCase(
        CHECK,
        "ffn_reads_attention_output",
        EncFfnReadsSublayerOutput,
        "mistake",
        "The FFN is fed the self-attention output a, not the stream x + a.",
    ),
    BlindCase(
        CHECK,
        "two_methods_two_dropouts",
        EncTwoMethods,
        "correct",
        "Pre- and post-norm as two methods, a dropout per sub-layer, explicit bias and eps.",
    ),
    BlindCase(
        CHECK,
        "fused_project_kv",
        EncFusedProjectKv,
        "correct",
        "Self-attention through project_kv and attend(fused=True); **unused extra arguments.",
    ),
    BlindCase(
        CHECK,
        "sublayer_helper_loop",
        EncSublayerHelper,
        "correct",
        "A loop over (sub-layer, norm) pairs through one Add & Norm helper; mask optional.",
    ),
    BlindCase(
        CHECK,
        "mask_expanded_per_query",
        EncMaskExpanded,
        "correct",
        "I expand the padding mask to (B, 1, S, S) before attention and keep the residual in a "
        "variable.",
    ),
]
