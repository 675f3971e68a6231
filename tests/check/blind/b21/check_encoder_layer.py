"""Blind set B21, check_encoder_layer (chapter 13): encoder blocks as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.multihead import MultiHeadAttention

from .. import BlindCase

CHECK = "check_encoder_layer"


class _Layers(nn.Module):
    """The book's layers, built the way the chapter lists them (shared by every case)."""

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
            x = self.dropout(self._attn(self.norm1(x), src_mask))  # forgot "x +"
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(self.dropout(self._attn(x, src_mask)))  # forgot "x +"
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNoFfnResidual(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class EncIgnoresNormFirst(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        # stored norm_first but always wrote the paper's post-norm
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormAddsNormed(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = self.norm1(x)  # normalised the stream itself, then added to it
            x = x + self.dropout(self._attn(x, src_mask))
            x = self.norm2(x)
            return x + self.dropout(self.feed_forward(x))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskInverted(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        blocked = ~src_mask  # thought attention wants True = blocked, like nn.MultiheadAttention
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), blocked))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, blocked)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncMaskUnused(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), None))  # the padding mask never passed
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


class EncKeysFromRawStream(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            # queries normalised, keys and values read from the raw stream
            x = x + self.dropout(self.self_attn(h, x, x, mask=src_mask)[0])
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncPreNormFinalNorm(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
            return self.norm2(x)  # closed the block with a LayerNorm as in post-norm
        x = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncNormOnSublayer(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        # post-norm written as x + norm(sublayer(x))
        x = x + self.norm1(self.dropout(self._attn(x, src_mask)))
        return x + self.norm2(self.dropout(self.feed_forward(x)))


class EncMaskOnQueries(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        mask = src_mask.transpose(-2, -1)  # (B, 1, S, 1): thought the mask must be a column
        if self.norm_first:
            x = x + self.dropout(self._attn(self.norm1(x), mask))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(self._attn(x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncFfnReadsInput(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = x + self.dropout(self._attn(self.norm1(x), src_mask))
            return h + self.dropout(self.feed_forward(self.norm2(x)))  # norm2(x), not norm2(h)
        h = self.norm1(x + self.dropout(self._attn(x, src_mask)))
        return self.norm2(h + self.dropout(self.feed_forward(x)))  # feed_forward(x), not (h)


class EncAttnWeightsTaken(_Layers):
    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def attn(h: Tensor) -> Tensor:
            out, weights = self.self_attn(h, h, h, mask=src_mask, need_weights=True)
            return weights.mean(dim=1) @ h  # averaged the heads' maps and applied them myself

        if self.norm_first:
            x = x + self.dropout(attn(self.norm1(x)))
            return x + self.dropout(self.feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout(attn(x)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


# ---------------------------------------------------------------- correct variants


class EncExplicit(_Layers):
    """Each sub-layer spelled out, with a dropout of its own for each."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            a, _ = self.self_attn(h, h, h, mask=src_mask)
            x = x + self.dropout1(a)
            f = self.feed_forward(self.norm2(x))
            return x + self.dropout2(f)
        a, _ = self.self_attn(x, x, x, mask=src_mask)
        x = self.norm1(x + self.dropout1(a))
        return self.norm2(x + self.dropout2(self.feed_forward(x)))


class EncSublayerHelper(_Layers):
    """A generic sublayer helper and the mask expanded to (B, 1, S, S) by hand."""

    def _sub(self, x: Tensor, fn, norm: nn.LayerNorm) -> Tensor:
        if self.norm_first:
            return torch.add(x, self.dropout(fn(norm(x))))
        return norm(torch.add(x, self.dropout(fn(x))))

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        S = x.shape[1]
        mask = src_mask.expand(-1, 1, S, S)
        x = self._sub(x, lambda h: self.self_attn.forward(h, h, h, mask)[0], self.norm1)
        return self._sub(x, self.feed_forward, self.norm2)


class EncProjectThenAttend(_Layers):
    """project_kv and attend called separately, fused attention for the scores."""

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        def attn(h: Tensor) -> Tensor:
            k, v = self.self_attn.project_kv(h, h)
            return self.self_attn.attend(h, k, v, mask=src_mask, fused=True)[0]

        for fn, norm in ((attn, self.norm1), (self.feed_forward, self.norm2)):
            x = x + self.dropout(fn(norm(x))) if self.norm_first else norm(x + self.dropout(fn(x)))
        return x


CASES = [
    BlindCase(
        CHECK,
        "no_attn_residual",
        EncNoAttnResidual,
        "mistake",
        "I forgot to add x back after self-attention",
    ),
    BlindCase(
        CHECK,
        "no_ffn_residual",
        EncNoFfnResidual,
        "mistake",
        "I forgot the residual connection around the feed-forward network",
    ),
    BlindCase(
        CHECK,
        "ignores_norm_first",
        EncIgnoresNormFirst,
        "mistake",
        "I stored norm_first but always wrote post-norm",
    ),
    BlindCase(
        CHECK,
        "prenorm_adds_normed",
        EncPreNormAddsNormed,
        "mistake",
        "in pre-norm I overwrote x with norm(x), so the residual adds the normalised x",
    ),
    BlindCase(
        CHECK,
        "mask_inverted",
        EncMaskInverted,
        "mistake",
        "I passed ~src_mask, thinking True means blocked",
    ),
    BlindCase(
        CHECK, "mask_unused", EncMaskUnused, "mistake", "I never passed src_mask to the attention"
    ),
    BlindCase(
        CHECK,
        "ffn_first",
        EncFfnFirst,
        "mistake",
        "I applied the feed-forward network before self-attention",
    ),
    BlindCase(
        CHECK,
        "prenorm_keys_raw",
        EncKeysFromRawStream,
        "mistake",
        "in pre-norm only the queries are normalised; keys and values read the raw x",
    ),
    BlindCase(
        CHECK,
        "prenorm_final_norm",
        EncPreNormFinalNorm,
        "mistake",
        "in pre-norm I ended the block with norm2 once more",
    ),
    BlindCase(
        CHECK,
        "norm_on_sublayer",
        EncNormOnSublayer,
        "mistake",
        "post-norm written as x + norm(sublayer(x))",
    ),
    BlindCase(
        CHECK,
        "mask_on_queries",
        EncMaskOnQueries,
        "mistake",
        "I transposed the padding mask to (B, 1, S, 1), so it masks queries, not keys",
    ),
    BlindCase(
        CHECK,
        "ffn_reads_input",
        EncFfnReadsInput,
        "mistake",
        "the feed-forward sub-layer reads the block's input x instead of the attention's",
    ),
    BlindCase(
        CHECK,
        "weights_without_values",
        EncAttnWeightsTaken,
        "mistake",
        "I took the attention weights, averaged the heads and applied them to x myself",
    ),
    BlindCase(
        CHECK,
        "explicit_two_dropouts",
        EncExplicit,
        "correct",
        "each sub-layer written out, with dropout1 and dropout2 of my own",
    ),
    BlindCase(
        CHECK,
        "helper_expanded_mask",
        EncSublayerHelper,
        "correct",
        "a sublayer helper and the mask expanded to (B, 1, S, S)",
    ),
    BlindCase(
        CHECK,
        "project_then_attend_fused",
        EncProjectThenAttend,
        "correct",
        "project_kv then attend with fused=True, in a loop over the two sub-layers",
    ),
]
