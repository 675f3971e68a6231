"""Blind set B8, check_encoder_layer (chapter 13): the encoder block as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


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
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def _attn(self, h: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class EncNoAttnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))
        else:
            x = self.norm1(self.dropout(self._attn(x, src_mask)))
        if self.norm_first:
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFfnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncNormOnSublayerOnly(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # post-norm: "Add & Norm" read as x + Norm(Sublayer(x))
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncPrenormResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._attn(h, src_mask))  # residual from the normed x
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # I thought True marks the padding, as in nn.MultiheadAttention
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return x + self.dropout(self._attn(self.norm1(x), src_mask))
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return self.norm1(x + self.dropout(self._attn(x, src_mask)))


class EncNormsSwapped(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm2(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm1(x)))
        x = self.norm2(x + self.dropout(self._attn(x, src_mask)))
        return self.norm1(x + self.dropout(self.feed_forward(x)))


class EncNormFirstIgnored(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPrenormExtraNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # "the stack ends with a LayerNorm", so I put it in the block
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPrenormQueryUnnormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(x, h, h, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): I masked the padded queries' rows
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncWrittenOut(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            a, _ = self.self_attn(h, h, h, src_mask)
            x = x + self.dropout(a)
            f = self.feed_forward(self.norm2(x))
            return x + self.dropout(f)
        a, _ = self.self_attn(x, x, x, src_mask)
        x = self.norm1(x + self.dropout(a))
        f = self.feed_forward(x)
        return self.norm2(x + self.dropout(f))


class EncSublayerHelper(_Layers):
    def _sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor, return_weights: bool = False) -> Tensor:
        x = self._sublayer(x, lambda h: self._attn(h, src_mask), self.norm1)
        return self._sublayer(x, self.feed_forward, self.norm2)


class EncExpandedMask(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        mask = src_mask.bool().expand(-1, -1, S, -1)  # (B, 1, S, S), the same rows spelled out
        residual = x
        h = self.norm1(x) if self.norm_first else x
        h = residual + self.dropout(self.self_attn(query=h, key=h, value=h, mask=mask)[0])
        x = h if self.norm_first else self.norm1(h)
        residual = x
        h = self.norm2(x) if self.norm_first else x
        h = residual + self.dropout(self.feed_forward(h))
        return h if self.norm_first else self.norm2(h)


class EncFunctionalNorm(_Layers):
    def _norm(self, norm: nn.LayerNorm, x: Tensor) -> Tensor:
        return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self._norm(self.norm1, x)
            x = torch.add(x, self.dropout(self._attn(h, src_mask)))
            h = self._norm(self.norm2, x)
            return torch.add(x, self.dropout(self.feed_forward(h)))
        x = self._norm(self.norm1, torch.add(x, self.dropout(self._attn(x, src_mask))))
        return self._norm(self.norm2, torch.add(x, self.dropout(self.feed_forward(x))))


def _case(name: str, code: type, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "no_attention_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot the residual around self-attention: the block continues from "
        "norm(attn(x)) (post-norm) or attn(norm(x)) (pre-norm) without adding x back.",
    ),
    _case(
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "The feed-forward sub-layer has no skip connection: its output (normed in post-norm) "
        "is the block's output, x is never added back.",
    ),
    _case(
        "postnorm_norm_on_sublayer_only",
        EncNormOnSublayerOnly,
        "mistake",
        "For post-norm I wrote x + norm(sublayer(x)), normalising only the sub-layer's output "
        "instead of the sum; the pre-norm branch is right.",
    ),
    _case(
        "prenorm_residual_from_normed_input",
        EncPrenormResidualFromNormed,
        "mistake",
        "In pre-norm I overwrote h = norm(x) and added the sub-layer output to h, so the "
        "residual stream carries the normalised x instead of x itself.",
    ),
    _case(
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask to the attention, thinking True means padding as in "
        "nn.MultiheadAttention, so real tokens are hidden and padding is seen.",
    ),
    _case(
        "mask_not_passed",
        EncMaskUnused,
        "mistake",
        "The self-attention is called without the mask, so every token also attends to the "
        "padding positions.",
    ),
    _case(
        "ffn_before_attention",
        EncFfnFirst,
        "mistake",
        "I applied the feed-forward sub-layer (with norm2) first and self-attention (with norm1) "
        "second.",
    ),
    _case(
        "norm1_norm2_swapped",
        EncNormsSwapped,
        "mistake",
        "The LayerNorms are swapped: norm2 goes with self-attention and norm1 with the "
        "feed-forward network (only visible once the norms' weights differ).",
    ),
    _case(
        "norm_first_ignored",
        EncNormFirstIgnored,
        "mistake",
        "I stored norm_first but always compute the post-norm block, so the pre-norm variant is "
        "post-norm too.",
    ),
    _case(
        "prenorm_extra_final_norm",
        EncPrenormExtraNorm,
        "mistake",
        "In pre-norm mode I apply norm2 once more to the block's output, because I read that a "
        "pre-norm stack ends with a LayerNorm; that belongs to the stack, not each block.",
    ),
    _case(
        "prenorm_query_not_normed",
        EncPrenormQueryUnnormed,
        "mistake",
        "In pre-norm I normalised the keys and values but passed the raw x as the query: "
        "self_attn(x, norm1(x), norm1(x)).",
    ),
    _case(
        "mask_on_query_rows",
        EncMaskOnQueries,
        "mistake",
        "I transposed the padding mask to (B, 1, S, 1) so that padded queries are masked, "
        "instead of padded keys; real queries still attend to the padding.",
    ),
    _case(
        "written_out_positional_mask",
        EncWrittenOut,
        "correct",
        "Both modes written out step by step, the mask passed positionally to self_attn.",
    ),
    _case(
        "sublayer_helper_extra_arg",
        EncSublayerHelper,
        "correct",
        "A small _sublayer helper for Add & Norm and an extra unused keyword argument with a "
        "default in forward.",
    ),
    _case(
        "expanded_mask_keywords",
        EncExpandedMask,
        "correct",
        "The mask expanded to (B, 1, S, S) before use, the attention called with keyword "
        "arguments, the residual kept in its own variable.",
    ),
    _case(
        "functional_layer_norm",
        EncFunctionalNorm,
        "correct",
        "Calls F.layer_norm with norm1's and norm2's own weights, bias and eps, and torch.add "
        "for the residuals.",
    ),
]
