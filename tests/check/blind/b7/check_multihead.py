"""Blind set B7, check_multihead (chapter 9): multi-head attention with q/k/v/out projections."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_multihead"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, so that each mistake below is the only thing wrong."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


class _Base(nn.Module):
    """The constructor of the skeleton, and a right split and merge."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.d_model, self.num_heads = d_model, num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, T, Dh)

    def merge(self, x: Tensor) -> Tensor:
        B, H, T, Dh = x.shape
        return x.transpose(1, 2).reshape(B, T, H * Dh)


# ---------------------------------------------------------------- mistakes


class MHANoOutProj(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.merge(weights @ v)  # the heads concatenated are the output


class MHAQProjForKeys(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.q_proj(key))  # copy-paste from the line above
        v = self.split(self.v_proj(value))
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAValuesFromKey(_Base):
    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query))
        k = self.split(self.k_proj(key))
        v = self.split(self.v_proj(key))  # key and value are the same tensor anyway
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHASoftmaxOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, H, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(scores.softmax(dim=1))
        return self.out_proj(self.merge(weights @ v))


class MHAMaskUnsqueezed(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is not None:
            mask = mask.unsqueeze(1)  # add the head axis
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return self.out_proj(self.merge(weights @ v))


class MHAViewNotContiguous(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        out = weights @ v  # (B, H, T_q, Dh)
        B, H, T, Dh = out.shape
        return self.out_proj(out.transpose(1, 2).view(B, T, H * Dh))


class MHAScaleBySqrtHeads(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.num_heads)
        weights = _masked_softmax(scores, mask)
        return self.out_proj(self.merge(weights @ v))


class MHAQueryLengthForKeys(_Base):
    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape  # the length of the sequence
        H, Dh = self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, T, H, Dh).transpose(1, 2)
        k = self.k_proj(key).view(B, T, H, Dh).transpose(1, 2)
        v = self.v_proj(value).view(B, T, H, Dh).transpose(1, 2)
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(Dh), mask)
        return self.out_proj((weights @ v).transpose(1, 2).reshape(B, T, D))


class MHATorchFunctionalSeqFirst(_Base):
    def forward(self, query, key, value, mask=None):
        out, _ = F.multi_head_attention_forward(
            query,  # batch-first tensors passed as they are
            key,
            value,
            self.d_model,
            self.num_heads,
            in_proj_weight=None,
            in_proj_bias=torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]),
            bias_k=None,
            bias_v=None,
            add_zero_attn=False,
            dropout_p=0.0,
            out_proj_weight=self.out_proj.weight,
            out_proj_bias=self.out_proj.bias,
            key_padding_mask=None if mask is None else ~mask.reshape(mask.shape[0], -1),
            need_weights=False,
            use_separate_proj_weight=True,
            q_proj_weight=self.q_proj.weight,
            k_proj_weight=self.k_proj.weight,
            v_proj_weight=self.v_proj.weight,
        )
        return out


class MHAReturnsWeightsFirst(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        return weights, self.out_proj(self.merge(weights @ v))


class MHAOutProjPerHead(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), mask)
        heads = weights @ v  # (B, H, T_q, Dh)
        W = self.out_proj.weight[:, : self.head_dim]  # the head's share of out_proj
        mixed = (heads @ W.T).sum(dim=1)  # every head through the same columns
        return mixed + self.out_proj.bias


class MHAMaskMinusLargeAdded(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + (1.0 - mask.float()) * -10000.0  # BERT's additive mask
        return self.out_proj(self.merge(scores.softmax(dim=-1) @ v))


# ---------------------------------------------------------------- correct variants


class MHALoopOverHeads(_Base):
    def forward(self, query, key, value, mask=None):
        Q, K, V = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(self.head_dim)
            m = mask
            if mask is not None and mask.dim() == 4:  # (B, 1 or H, T_q or 1, T_k)
                m = mask[:, h % mask.shape[1]]
            heads.append(_masked_softmax(scores, m) @ V[..., cols])
        return self.out_proj(torch.cat(heads, dim=-1))


class MHAEinsumUnflatten(_Base):
    def forward(self, query, key, value, mask=None):
        H = self.num_heads
        q = self.q_proj(query).unflatten(-1, (H, -1))  # (B, T_q, H, Dh)
        k = self.k_proj(key).unflatten(-1, (H, -1))
        v = self.v_proj(value).unflatten(-1, (H, -1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        weights = _masked_softmax(scores, mask)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(-2)  # (B, T_q, D)
        return self.out_proj(out), weights


class MHASdpaSafe(_Base):
    def forward(self, query, key, value, mask=None):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        if mask is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            has_key = mask.any(dim=-1, keepdim=True)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
            out = out.masked_fill(~has_key, 0.0)
        return self.out_proj(out.transpose(1, 2).contiguous().view(query.shape))


class MHAFloat64Scores(_Base):
    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        q, k, v = (
            self.split(self.q_proj(query)),
            self.split(self.k_proj(key)),
            self.split(self.v_proj(value)),
        )
        scores = (q.double() @ k.double().transpose(-2, -1)) * self.head_dim**-0.5
        weights = _masked_softmax(scores, mask).to(q.dtype)
        out = self.out_proj(self.merge(weights @ v))
        return (out, weights) if need_weights else out


CASES = [
    BlindCase(
        check=CHECK,
        name="out_proj_not_applied",
        code=MHANoOutProj,
        kind="mistake",
        what="I defined out_proj but returned the concatenated heads without applying it.",
    ),
    BlindCase(
        check=CHECK,
        name="q_proj_for_keys",
        code=MHAQProjForKeys,
        kind="mistake",
        what="I projected the keys with q_proj (a copy-paste slip) instead of k_proj.",
    ),
    BlindCase(
        check=CHECK,
        name="values_projected_from_key",
        code=MHAValuesFromKey,
        kind="mistake",
        what="I wrote v_proj(key) instead of v_proj(value); it only shows when key and value "
        "differ.",
    ),
    BlindCase(
        check=CHECK,
        name="softmax_over_heads",
        code=MHASoftmaxOverHeads,
        kind="mistake",
        what="I took the softmax over dim=1 of the (B, H, T_q, T_k) scores, which is the head "
        "axis.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_gets_extra_head_axis",
        code=MHAMaskUnsqueezed,
        kind="mistake",
        what="I added a head axis to the mask with mask.unsqueeze(1), although it already "
        "comes as (B, 1, 1, T_k).",
    ),
    BlindCase(
        check=CHECK,
        name="view_after_transpose",
        code=MHAViewNotContiguous,
        kind="mistake",
        what="I merged the heads with .view after transpose(1, 2), which raises because the "
        "tensor is not contiguous (reshape or .contiguous() was needed).",
    ),
    BlindCase(
        check=CHECK,
        name="scale_sqrt_num_heads",
        code=MHAScaleBySqrtHeads,
        kind="mistake",
        what="I divided the scores by sqrt(num_heads) instead of sqrt(head_dim).",
    ),
    BlindCase(
        check=CHECK,
        name="query_length_for_keys",
        code=MHAQueryLengthForKeys,
        kind="mistake",
        what="I took T from the query and used it to split the keys and values too, which "
        "breaks when the keys are longer or shorter than the queries.",
    ),
    BlindCase(
        check=CHECK,
        name="functional_mha_batch_first",
        code=MHATorchFunctionalSeqFirst,
        kind="mistake",
        what="I called F.multi_head_attention_forward with my projection weights but passed "
        "the batch-first tensors as they are; it expects (T, B, D).",
    ),
    BlindCase(
        check=CHECK,
        name="returns_weights_then_output",
        code=MHAReturnsWeightsFirst,
        kind="mistake",
        what="I returned (weights, out) instead of out or (out, weights).",
    ),
    BlindCase(
        check=CHECK,
        name="out_proj_columns_of_head_zero",
        code=MHAOutProjPerHead,
        kind="mistake",
        what="I applied out_proj to each head separately and summed, but used the first "
        "head's columns of the weight for every head.",
    ),
    BlindCase(
        check=CHECK,
        name="additive_minus_10000",
        code=MHAMaskMinusLargeAdded,
        kind="mistake",
        what="I added (1 - mask) * -10000 to the scores, BERT's additive mask, so a query with "
        "no visible key spreads its weight over the padding.",
    ),
    BlindCase(
        check=CHECK,
        name="loop_over_heads",
        code=MHALoopOverHeads,
        kind="correct",
        what="I looped over the heads with column slices of the projected tensors and "
        "concatenated the heads' outputs in order.",
    ),
    BlindCase(
        check=CHECK,
        name="einsum_unflatten_returns_pair",
        code=MHAEinsumUnflatten,
        kind="correct",
        what="I split the heads with unflatten, wrote both products with einsum without "
        "transposing, and returned (out, weights).",
    ),
    BlindCase(
        check=CHECK,
        name="sdpa_with_safe_mask",
        code=MHASdpaSafe,
        kind="correct",
        what="I used F.scaled_dot_product_attention, let a query with no key see every key and "
        "zeroed its output afterwards, and merged with contiguous().view.",
    ),
    BlindCase(
        check=CHECK,
        name="float64_scores_need_weights_kwarg",
        code=MHAFloat64Scores,
        kind="correct",
        what="I computed the scores and softmax in float64, cast back, and added an optional "
        "need_weights argument (default False).",
    ),
]
