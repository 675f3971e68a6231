"""Blind set B7, check_attention (chapter 6): scaled dot-product attention, (out, weights)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, so that each mistake below is the only thing wrong."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_k_dot_t(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.T / math.sqrt(q.shape[-1])  # Q K^T, as in the formula
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_scale_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_times_sqrt_d(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_scale_by_num_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # sqrt of the keys' count
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_power_precedence(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) * d**-1 / 2  # meant d ** (-1/2)
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_shape_index_one(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    d_k = q.size(1)  # q is (T, d_k)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
    weights = _masked_softmax(scores, mask)
    return torch.matmul(weights, v), weights


def att_values_are_keys(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights  # the weighted sum of the keys


def att_mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # masked keys get weight 0
    return weights @ v, weights


def att_nan_weights_kept(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    out = torch.nan_to_num(weights @ v)  # a query with no key gets a zero output
    return out, weights


def att_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])  # batched matmul
    weights = _masked_softmax(scores, mask)
    return torch.bmm(weights, v), weights


def att_mask_unsqueezed(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    if mask is not None:
        mask = mask.unsqueeze(1)  # one mask row for every query
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v, weights


def att_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v  # the output is what attention computes


# ---------------------------------------------------------------- correct variants


def att_float64_inside(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()
    weights = _masked_softmax(q64 @ k64.mT / math.sqrt(k.shape[-1]), mask)
    return (weights @ v64).to(dtype), weights.to(dtype)


def att_sdpa_and_weights(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    """The output from the fused kernel (rows with no key handled by hand), the weights from
    the same masked scores for plotting."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), weights
    has_key = mask.any(dim=-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    return out.masked_fill(~has_key, 0.0), weights


def att_transposed_product(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple:
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores_t = (k * scale) @ q.transpose(-2, -1)  # (..., T_k, T_q): keys on the rows
    weights = _masked_softmax(scores_t.transpose(-2, -1), mask)
    out = (v.transpose(-2, -1) @ weights.transpose(-2, -1)).transpose(-2, -1)
    return out, weights


def att_where_and_extra_args(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    temperature: float | None = None,
) -> tuple[Tensor, Tensor]:
    """An optional temperature (default sqrt(d_k)) and the masked softmax written with where."""
    temperature = math.sqrt(q.shape[-1]) if temperature is None else temperature
    scores = torch.matmul(q, k.transpose(-1, -2)) / temperature
    if mask is None:
        weights = scores.softmax(-1)
    else:
        mask = mask.expand_as(scores)
        ok = mask.any(-1, keepdim=True)
        neg_inf = torch.full_like(scores, float("-inf"))
        weights = torch.where(ok, torch.where(mask, scores, neg_inf), 0.0).softmax(-1)
        weights = torch.where(ok, weights, 0.0)
    return torch.matmul(weights, v), weights


CASES = [
    BlindCase(
        check=CHECK,
        name="k_dot_T",
        code=att_k_dot_t,
        kind="mistake",
        what="I wrote Q K^T as q @ k.T, which for batched keys (B, T_k, d) reverses all the "
        "axes instead of swapping the last two.",
    ),
    BlindCase(
        check=CHECK,
        name="scale_after_softmax",
        code=att_scale_after_softmax,
        kind="mistake",
        what="I divided by sqrt(d_k) after the softmax instead of before it, so the weights "
        "no longer sum to 1.",
    ),
    BlindCase(
        check=CHECK,
        name="multiplied_by_sqrt_d",
        code=att_times_sqrt_d,
        kind="mistake",
        what="I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        check=CHECK,
        name="scale_by_number_of_keys",
        code=att_scale_by_num_keys,
        kind="mistake",
        what="I divided by the square root of k.shape[-2], the number of keys, instead of "
        "their size d_k.",
    ),
    BlindCase(
        check=CHECK,
        name="power_precedence",
        code=att_power_precedence,
        kind="mistake",
        what="I wrote the scale as d**-1/2, which Python reads as (1/d)/2, not d**(-1/2).",
    ),
    BlindCase(
        check=CHECK,
        name="d_k_from_size_1",
        code=att_shape_index_one,
        kind="mistake",
        what="I took d_k = q.size(1), thinking of q as (T, d_k); for batched q (B, T_q, d_k) "
        "that is T_q.",
    ),
    BlindCase(
        check=CHECK,
        name="weighted_sum_of_keys",
        code=att_values_are_keys,
        kind="mistake",
        what="I returned weights @ k instead of weights @ v.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_applied_after_softmax",
        code=att_mask_after_softmax,
        kind="mistake",
        what="I applied the mask to the weights after the softmax (masked_fill with 0) instead "
        "of to the scores, so the visible keys' weights do not sum to 1.",
    ),
    BlindCase(
        check=CHECK,
        name="nan_weights_returned",
        code=att_nan_weights_kept,
        kind="mistake",
        what="I fixed a query with no visible key by nan_to_num on the output only; its weights "
        "are still returned as NaN.",
    ),
    BlindCase(
        check=CHECK,
        name="bmm_three_dims_only",
        code=att_bmm,
        kind="mistake",
        what="I used torch.bmm, which only takes 3-D tensors, so inputs with a head axis "
        "(B, H, T, d) raise.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_unsqueezed_again",
        code=att_mask_unsqueezed,
        kind="mistake",
        what="I added a query axis to the mask with mask.unsqueeze(1), although the mask "
        "already broadcasts to the scores.",
    ),
    BlindCase(
        check=CHECK,
        name="returns_output_only",
        code=att_out_only,
        kind="mistake",
        what="I returned only the output, not the pair (out, weights).",
    ),
    BlindCase(
        check=CHECK,
        name="float64_inside",
        code=att_float64_inside,
        kind="correct",
        what="I computed scores, softmax and output in float64 (with k.mT) and cast both "
        "results back to the input dtype.",
    ),
    BlindCase(
        check=CHECK,
        name="sdpa_output_explicit_weights",
        code=att_sdpa_and_weights,
        kind="correct",
        what="I took the output from F.scaled_dot_product_attention (a query with no key gets "
        "every key and is zeroed after) and computed the weights explicitly.",
    ),
    BlindCase(
        check=CHECK,
        name="keys_on_rows_then_transposed",
        code=att_transposed_product,
        kind="correct",
        what="I computed K Q^T with the keys on the rows and transposed it back, and the output "
        "as (V^T W^T)^T.",
    ),
    BlindCase(
        check=CHECK,
        name="where_and_temperature_kwarg",
        code=att_where_and_extra_args,
        kind="correct",
        what="I added a keyword-only temperature (default sqrt(d_k)) and wrote the masking with "
        "nested torch.where.",
    ),
]
