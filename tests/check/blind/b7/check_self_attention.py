"""Blind set B7, check_self_attention (chapter 8): single-head self-attention with W_q, W_k, W_v."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_self_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, so that each mistake below is the only thing wrong."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The three matrices as the chapter stores them, (d_in, d_k) and (d_in, d_v)."""

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_k = nn.Parameter(torch.randn(d_in, d_k) / math.sqrt(d_in))
        self.W_v = nn.Parameter(torch.randn(d_in, d_v) / math.sqrt(d_in))


# ---------------------------------------------------------------- mistakes


class SALinearWithBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Linear(d_in, d_k)  # default bias=True
        self.W_k = nn.Linear(d_in, d_k)
        self.W_v = nn.Linear(d_in, d_v)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAScaleByDIn(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])  # the model's width
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


class SAScaleBoth(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        q = x @ self.W_q / math.sqrt(d_k)  # scale the queries ...
        k = x @ self.W_k / math.sqrt(d_k)  # ... and the keys
        weights = _masked_softmax(q @ k.transpose(-2, -1), mask)
        return weights @ (x @ self.W_v), weights


class SAMaskedScoreZero(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores * mask  # hidden keys score 0
        weights = scores.softmax(dim=-1)
        return weights @ v, weights


class SAMaskTimesWeights(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-1)
        if mask is not None:
            weights = weights * mask  # hidden keys weighted 0
        return weights @ v, weights


class SAResidualInside(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return x + weights @ v, weights  # keep the token's own vector, as in a ResNet


class SAAlwaysCausal(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # no peeking ahead
        mask = causal if mask is None else mask & causal
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAIfMask(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask:  # only when a mask was given
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        return weights @ v, weights


class SASoftmaxOverAllPairs(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        B, T, _ = x.shape
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.view(B, -1).softmax(dim=-1).view(B, T, T)  # one distribution
        return weights @ v, weights


class SADefaultDvFromDIn(_Base):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__(d_in, d_k, d_in if d_v is None else d_v)  # values keep the input size

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAKeysFromWv(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_v, x @ self.W_v  # copy-paste slip in k
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
        return weights @ v, weights


class SAWeightsTransposedInOutput(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = x @ self.W_q, x @ self.W_k, x @ self.W_v
        scores = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T, T), keys first
        weights = _masked_softmax(scores, mask)
        return weights @ v, weights


# ---------------------------------------------------------------- correct variants


class SALinearNoBias(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_in, d_k, bias=False)
        self.W_k = nn.Linear(d_in, d_k, bias=False)
        self.W_v = nn.Linear(d_in, d_k if d_v is None else d_v, bias=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), mask)
        return weights @ v, weights


class SAEinsumXavier(nn.Module):
    def __init__(self, d_in: int, d_k: int, d_v: int | None = None) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.W_q = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_k)))
        self.W_k = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_k)))
        self.W_v = nn.Parameter(nn.init.xavier_uniform_(torch.empty(d_in, d_v)))

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q = torch.einsum("btd,dk->btk", x, self.W_q)
        k = torch.einsum("btd,dk->btk", x, self.W_k)
        v = torch.einsum("btd,dv->btv", x, self.W_v)
        scores = torch.einsum("bqk,bsk->bqs", q, k) / q.shape[-1] ** 0.5
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
            empty = (mask == 0).all(-1, keepdim=True)
            scores = scores.masked_fill(empty, 0.0)
            weights = scores.softmax(-1).masked_fill(empty, 0.0)
        else:
            weights = scores.softmax(-1)
        return torch.einsum("bqs,bsv->bqv", weights, v), weights


class SABookAttention(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        from transformer_tutorial.attention import attention  # chapter 6's function

        return attention(x @ self.W_q, x @ self.W_k, x @ self.W_v, mask)


class SAOneMatmulSplit(_Base):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        d_k = self.W_q.shape[1]
        W = torch.cat([self.W_q, self.W_k, self.W_v], dim=1)  # one product for q, k and v
        q, k, v = (x @ W).split([d_k, d_k, self.W_v.shape[1]], dim=-1)
        weights = _masked_softmax((q * d_k**-0.5) @ k.mT, mask)
        return weights @ v, weights


CASES = [
    BlindCase(
        check=CHECK,
        name="linear_layers_with_bias",
        code=SALinearWithBias,
        kind="mistake",
        what="I used nn.Linear layers for the three projections but left their default bias on.",
    ),
    BlindCase(
        check=CHECK,
        name="scale_by_sqrt_d_in",
        code=SAScaleByDIn,
        kind="mistake",
        what="I divided by sqrt of the input width d_in (x.shape[-1]) instead of sqrt(d_k).",
    ),
    BlindCase(
        check=CHECK,
        name="scaled_q_and_k",
        code=SAScaleBoth,
        kind="mistake",
        what="I divided both q and k by sqrt(d_k) before their product, so the scores are "
        "divided by d_k in total.",
    ),
    BlindCase(
        check=CHECK,
        name="masked_scores_zero",
        code=SAMaskedScoreZero,
        kind="mistake",
        what="I multiplied the scores by the mask, so hidden keys get score 0 instead of -inf.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_multiplies_weights",
        code=SAMaskTimesWeights,
        kind="mistake",
        what="I multiplied the softmax weights by the mask without renormalizing them.",
    ),
    BlindCase(
        check=CHECK,
        name="residual_added",
        code=SAResidualInside,
        kind="mistake",
        what="I added the input x to the output (a residual connection) inside the layer.",
    ),
    BlindCase(
        check=CHECK,
        name="always_causal",
        code=SAAlwaysCausal,
        kind="mistake",
        what="I always combined the mask with a causal (lower-triangular) mask, as GPT does, so "
        "a token never sees the keys after it.",
    ),
    BlindCase(
        check=CHECK,
        name="if_mask_truthiness",
        code=SAIfMask,
        kind="mistake",
        what="I wrote `if mask:` instead of `if mask is not None:`, which raises for a mask "
        "with more than one element.",
    ),
    BlindCase(
        check=CHECK,
        name="softmax_over_all_pairs",
        code=SASoftmaxOverAllPairs,
        kind="mistake",
        what="I flattened the (T, T) scores of each sentence and took one softmax over all "
        "pairs instead of one per query.",
    ),
    BlindCase(
        check=CHECK,
        name="d_v_defaults_to_d_in",
        code=SADefaultDvFromDIn,
        kind="mistake",
        what="When d_v is None I gave W_v the width d_in instead of d_k.",
    ),
    BlindCase(
        check=CHECK,
        name="keys_from_w_v",
        code=SAKeysFromWv,
        kind="mistake",
        what="I computed the keys with W_v (a copy-paste slip) instead of W_k.",
    ),
    BlindCase(
        check=CHECK,
        name="scores_keys_by_queries",
        code=SAWeightsTransposedInOutput,
        kind="mistake",
        what="I computed the scores as K Q^T instead of Q K^T, so the rows are keys and the "
        "softmax normalizes over the queries.",
    ),
    BlindCase(
        check=CHECK,
        name="bias_free_linear",
        code=SALinearNoBias,
        kind="correct",
        what="I used bias-free nn.Linear layers for W_q, W_k and W_v, which the chapter accepts.",
    ),
    BlindCase(
        check=CHECK,
        name="einsum_xavier_init",
        code=SAEinsumXavier,
        kind="correct",
        what="I initialized the matrices with xavier_uniform_, wrote every product with einsum "
        "and compared mask == 0.",
    ),
    BlindCase(
        check=CHECK,
        name="calls_chapter6_attention",
        code=SABookAttention,
        kind="correct",
        what="I projected x three times and called chapter 6's attention(q, k, v, mask).",
    ),
    BlindCase(
        check=CHECK,
        name="one_fused_projection",
        code=SAOneMatmulSplit,
        kind="correct",
        what="I concatenated the three matrices, did one product and split q, k, v, with the "
        "scale folded into q.",
    ),
]
