"""Blind set B5, check_encoder_layer (chapter 13): encoder blocks as readers write them."""

from __future__ import annotations

from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The four layers with the book's names; subclasses write ``forward``."""

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

    def attn(self, h: Tensor, mask: Tensor) -> Tensor:
        out, _ = self.self_attn(h, h, h, mask=mask)
        return out


# ---------------------------------------------------------------- mistakes


class EncResidualFromNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = h + self.drop(self.attn(h, src_mask))  # residual taken after the norm
            h = self.norm2(x)
            return h + self.drop(self.feed_forward(h))
        x = self.norm1(x + self.drop(self.attn(x, src_mask)))
        return self.norm2(x + self.drop(self.feed_forward(x)))


class EncNormTwiceInPost(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.drop(self.attn(self.norm1(x), src_mask))
            return x + self.drop(self.feed_forward(self.norm2(x)))
        # post-norm, but the sub-layers also read the normalised input
        x = self.norm1(x + self.drop(self.attn(self.norm1(x), src_mask)))
        return self.norm2(x + self.drop(self.feed_forward(self.norm2(x))))


class EncOneNormForBoth(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        norm = self.norm1  # norm2 is built but never used
        if self.norm_first:
            x = x + self.drop(self.attn(norm(x), src_mask))
            return x + self.drop(self.feed_forward(norm(x)))
        x = norm(x + self.drop(self.attn(x, src_mask)))
        return norm(x + self.drop(self.feed_forward(x)))


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-1, -2)  # (B, 1, S, 1): thought rows had to be the padding
        if self.norm_first:
            x = x + self.drop(self.attn(self.norm1(x), mask))
            return x + self.drop(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.drop(self.attn(x, mask)))
        return self.norm2(x + self.drop(self.feed_forward(x)))


class EncFfnSkipsFromInput(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            a = x + self.drop(self.attn(self.norm1(x), src_mask))
            return x + self.drop(self.feed_forward(self.norm2(a)))  # skip from the block input
        a = self.norm1(x + self.drop(self.attn(x, src_mask)))
        return self.norm2(x + self.drop(self.feed_forward(a)))  # skip from the block input


class EncFinalNormInsideBlock(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.drop(self.attn(self.norm1(x), src_mask))
            x = x + self.drop(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # the stack's final LayerNorm put into every pre-norm block
        x = self.norm1(x + self.drop(self.attn(x, src_mask)))
        return self.norm2(x + self.drop(self.feed_forward(x)))


class EncAlwaysPostNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # norm_first is stored but never read: every block is post-norm
        x = self.norm1(x + self.drop(self.attn(x, src_mask)))
        return self.norm2(x + self.drop(self.feed_forward(x)))


class EncTorchMaskConvention(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = src_mask == 0  # nn.MultiheadAttention's convention: True = blocked
        if self.norm_first:
            x = x + self.drop(self.attn(self.norm1(x), blocked))
            return x + self.drop(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.drop(self.attn(x, blocked)))
        return self.norm2(x + self.drop(self.feed_forward(x)))


class EncHardCodedDropout(_Layers):
    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = False,
    ) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.drop = nn.Dropout(0.1)  # the paper's P_drop written in, whatever is asked

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.drop(self.attn(self.norm1(x), src_mask))
            return x + self.drop(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.drop(self.attn(x, src_mask)))
        return self.norm2(x + self.drop(self.feed_forward(x)))


class EncReturnsWeights(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        h = self.norm1(x) if self.norm_first else x
        a, w = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
        x = x + self.drop(a) if self.norm_first else self.norm1(x + self.drop(a))
        if self.norm_first:
            x = x + self.drop(self.feed_forward(self.norm2(x)))
        else:
            x = self.norm2(x + self.drop(self.feed_forward(x)))
        return x, w  # like MultiHeadAttention: the output and the weights


# ---------------------------------------------------------------- correct variants


class EncSublayerHelper(_Layers):
    """One helper per sub-layer, optional mask, and an unused ``weights`` argument."""

    def _add_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return x + self.drop(sublayer(norm(x)))
        return norm(x + self.drop(sublayer(x)))

    def forward(self, x: Tensor, src_mask: Tensor | None = None, weights=None) -> Tensor:
        x = self._add_norm(x, lambda h: self.attn(h, src_mask), self.norm1)
        return self._add_norm(x, self.feed_forward, self.norm2)


class EncProjectAttendExplicit(_Layers):
    """Attention through ``project_kv`` and ``attend``, each mode written out in full."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if not self.norm_first:
            k, v = self.self_attn.project_kv(x, x)
            a, _ = self.self_attn.attend(x, k, v, mask=src_mask)
            y = self.norm1(x + self.drop(a))
            f = self.drop(self.feed_forward(y))
            return self.norm2(y + f)
        h = self.norm1(x)
        k, v = self.self_attn.project_kv(h, h)
        a, _ = self.self_attn.attend(h, k, v, mask=src_mask)
        y = x + self.drop(a)
        return y + self.drop(self.feed_forward(self.norm2(y)))


CASES = [
    BlindCase(
        CHECK,
        "residual_from_normed",
        EncResidualFromNormed,
        "mistake",
        "In pre-norm I added the sub-layer's output to the normalised x instead of to x "
        "itself, so the residual stream is normalised after all.",
    ),
    BlindCase(
        CHECK,
        "post_norm_sublayer_reads_normed",
        EncNormTwiceInPost,
        "mistake",
        "In post-norm I fed the sub-layers norm(x) as well as normalising the sum, so each "
        "LayerNorm is applied twice.",
    ),
    BlindCase(
        CHECK,
        "norm1_reused",
        EncOneNormForBoth,
        "mistake",
        "I used norm1 for both sub-layers; norm2 exists but is never called.",
    ),
    BlindCase(
        CHECK,
        "mask_transposed_to_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed src_mask to (B, 1, S, 1), so it masks the padding queries instead of "
        "the padding keys.",
    ),
    BlindCase(
        CHECK,
        "ffn_skip_from_block_input",
        EncFfnSkipsFromInput,
        "mistake",
        "The feed-forward sub-layer's residual adds the block's input x instead of the "
        "output of the attention sub-layer.",
    ),
    BlindCase(
        CHECK,
        "final_norm_in_prenorm_block",
        EncFinalNormInsideBlock,
        "mistake",
        "In pre-norm I ended each block with norm2 applied to the output, putting the "
        "stack's final LayerNorm inside the block.",
    ),
    BlindCase(
        CHECK,
        "norm_first_ignored",
        EncAlwaysPostNorm,
        "mistake",
        "I stored norm_first but never read it, so the block is post-norm in both modes.",
    ),
    BlindCase(
        CHECK,
        "torch_mask_polarity",
        EncTorchMaskConvention,
        "mistake",
        "I turned src_mask into nn.MultiheadAttention's convention (src_mask == 0, True = "
        "blocked) before passing it to the book's MultiHeadAttention.",
    ),
    BlindCase(
        CHECK,
        "dropout_hard_coded",
        EncHardCodedDropout,
        "mistake",
        "I hard-coded nn.Dropout(0.1) on the sub-layer outputs instead of using the dropout "
        "argument, so dropout=0.0 still drops in training mode.",
    ),
    BlindCase(
        CHECK,
        "returns_out_and_weights",
        EncReturnsWeights,
        "mistake",
        "forward returns a tuple (output, attention weights) like MultiHeadAttention "
        "instead of the output tensor alone.",
    ),
    BlindCase(
        CHECK,
        "helper_optional_mask",
        EncSublayerHelper,
        "correct",
        "A small _add_norm helper per sub-layer; the mask is optional and an unused "
        "weights argument defaults to None.",
    ),
    BlindCase(
        CHECK,
        "project_kv_attend",
        EncProjectAttendExplicit,
        "correct",
        "Self-attention through project_kv and attend, the post-norm and pre-norm paths "
        "written out separately.",
    ),
]
