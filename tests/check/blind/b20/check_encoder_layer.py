"""Blind set B20, check_encoder_layer (chapter 13): encoder blocks as readers write them."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Base(nn.Module):
    """The book's layer names; the forward is each case's own."""

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

    def _attn(self, h: Tensor, mask: Tensor) -> Tensor:
        return self.self_attn(h, h, h, mask=mask)[0]


# ---------------------------------------------------------------- mistakes


class EncNoResidualAttn(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.dropout(self._attn(self.norm1(x), src_mask))  # forgot "x +"
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))  # forgot "x +"
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormOnSublayer(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # post-norm written as x + norm(sublayer(x))
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncPreNormKeysUnnormalized(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])  # only the query normed
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = ~src_mask  # thought True meant "padding" as in nn.MultiheadAttention
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), None))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, None)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnFirst(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return x + self.dropout(self._attn(self.norm1(x), src_mask))
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return self.norm1(x + self.dropout(self._attn(x, src_mask)))


class EncPreNormFinalNorm(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # "pre-norm needs a final LayerNorm", put inside the block
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormResidualOfNormed(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.dropout(self._attn(h, src_mask))  # residual from the normed x
            h = self.norm2(x)
            return h + self.dropout(self.feed_forward(h))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncModesSwapped(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:  # branches the wrong way round
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncSkipFromInput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            y = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(y)))  # skip from the block input
        y = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(y)))  # skip from the block input


class EncMaskOnQueries(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): I thought rows needed the mask
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncAttnMaskKeyword(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        attn = self.self_attn
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout(attn(h, h, h, attn_mask=src_mask)[0])  # PyTorch's keyword
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(attn(x, x, x, attn_mask=src_mask)[0]))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncReturnsTuple(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple:
        if self.norm_first:
            out, w = self.self_attn(self.norm1(x), self.norm1(x), self.norm1(x), src_mask, True)
            x = x + self.dropout(out)
            return x + self.dropout(self.feed_forward(self.norm2(x))), w
        out, w = self.self_attn(x, x, x, src_mask, True)
        x = self.norm1(x + self.dropout(out))
        return self.norm2(x + self.dropout(self.feed_forward(x))), w  # also the weights


class EncFfnOnAttnOutput(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = self.dropout(self._attn(self.norm1(x), src_mask))
            x = x + a
            return x + self.dropout(self.feed_forward(self.norm2(a)))  # FFN of the sub-layer only
        a = self._attn(x, src_mask)
        x = self.norm1(x + self.dropout(a))
        return self.norm2(x + self.dropout(self.feed_forward(a)))  # FFN of the raw attention


# ---------------------------------------------------------------- correct


class EncWithHelper(_Base):
    def _sublayer(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.dropout(fn(norm(x)))
        return norm(x + self.dropout(fn(x)))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self._sublayer(x, lambda h: self._attn(h, src_mask), self.norm1)
        return self._sublayer(x, self.feed_forward, self.norm2)


class EncFunctionalDropout(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.p = dropout
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def drop(t: Tensor) -> Tensor:
            return F.dropout(t, self.p, self.training)

        if self.norm_first:
            h = self.norm1(x)
            x = x + drop(self.self_attn(h, h, h, mask=src_mask)[0])
            h = self.norm2(x)
            return x + drop(self.feed_forward(h))
        x = self.norm1(x + drop(self.self_attn(x, x, x, mask=src_mask)[0]))
        return self.norm2(x + drop(self.feed_forward(x)))


class EncProjectAttend(_Base):
    """Separate dropouts and the two halves of MultiHeadAttention, project_kv then attend."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.drop1, self.drop2 = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        h = self.norm1(x) if self.norm_first else x
        k, v = self.self_attn.project_kv(h, h)
        a, _ = self.self_attn.attend(h, k, v, src_mask, need_weights=True)
        x = x + self.drop1(a)
        if not self.norm_first:
            x = self.norm1(x)
        h = self.norm2(x) if self.norm_first else x
        x = x + self.drop2(self.feed_forward(h))
        return x if self.norm_first else self.norm2(x)


class EncMaskExpanded(_Base):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        B, S, _ = x.shape
        mask = src_mask.bool().expand(B, 1, S, S)  # every query row spelled out
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return x
        x = self.norm1(self.dropout(self._attn(x, mask)) + x)
        x = self.norm2(self.dropout(self.feed_forward(x)) + x)
        return x


CASES = [
    BlindCase(
        CHECK, "no_residual_attn", EncNoResidualAttn, "mistake", "forgot x + on the attention"
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer",
        EncNormOnSublayer,
        "mistake",
        "post-norm as x + norm(sublayer(x)) instead of norm(x + sublayer(x))",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_unnormalized",
        EncPreNormKeysUnnormalized,
        "mistake",
        "pre-norm: normalized only the query, keys and values are the raw x",
    ),
    BlindCase(
        CHECK, "mask_inverted", EncMaskInverted, "mistake", "passed ~src_mask (True = padding)"
    ),
    BlindCase(CHECK, "mask_unused", EncMaskUnused, "mistake", "called attention with mask=None"),
    BlindCase(CHECK, "ffn_first", EncFfnFirst, "mistake", "feed-forward before self-attention"),
    BlindCase(
        CHECK,
        "prenorm_final_norm",
        EncPreNormFinalNorm,
        "mistake",
        "pre-norm: added a LayerNorm at the end of the block",
    ),
    BlindCase(
        CHECK,
        "prenorm_residual_of_normed",
        EncPreNormResidualOfNormed,
        "mistake",
        "pre-norm: the residual adds the normalized x instead of x",
    ),
    BlindCase(
        CHECK, "modes_swapped", EncModesSwapped, "mistake", "pre-norm when norm_first is False"
    ),
    BlindCase(
        CHECK,
        "skip_from_input",
        EncSkipFromInput,
        "mistake",
        "the FFN's residual adds the block input instead of the attention sub-layer's output",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "transposed the mask to (B, 1, S, 1), so padding masks queries, not keys",
    ),
    BlindCase(
        CHECK,
        "attn_mask_keyword",
        EncAttnMaskKeyword,
        "mistake",
        "called the attention with attn_mask= as in PyTorch",
    ),
    BlindCase(CHECK, "returns_tuple", EncReturnsTuple, "mistake", "returned (output, weights)"),
    BlindCase(
        CHECK,
        "ffn_on_attn_output",
        EncFfnOnAttnOutput,
        "mistake",
        "fed the FFN the attention output instead of the residual stream",
    ),
    BlindCase(CHECK, "with_helper", EncWithHelper, "correct", "a _sublayer helper for both modes"),
    BlindCase(
        CHECK,
        "functional_dropout",
        EncFunctionalDropout,
        "correct",
        "F.dropout instead of a dropout module, positional constructor args",
    ),
    BlindCase(
        CHECK,
        "project_attend",
        EncProjectAttend,
        "correct",
        "project_kv + attend, one dropout module per sub-layer, one code path for both modes",
    ),
    BlindCase(
        CHECK,
        "mask_expanded",
        EncMaskExpanded,
        "correct",
        "expanded the mask to (B, 1, S, S), sublayer + x order",
    ),
]
