"""Blind set B30, check_attention (chapter 6): scaled dot-product attention, as readers write it
after the chapter."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_attention"


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    """A right masked softmax, for the mistakes that are elsewhere."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- mistakes


def att_scale_after_softmax(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = _masked_softmax(q @ k.transpose(-2, -1), mask) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def att_times_sqrt_dk(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_scale_by_key_count(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    d_k = k.size(-2)  # the size of k
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), mask)
    return weights @ v, weights


def att_floor_division(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) // math.sqrt(q.shape[-1])
    weights = _masked_softmax(scores, mask)
    return weights @ v, weights


def att_softmax_dim1(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 1: after the batch
    return weights @ v, weights


def att_mask_after_softmax(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def att_weights_times_keys(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ k, weights


def att_returns_out_only(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return weights @ v


def att_bmm(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])  # (B, T_q, T_k)
    weights = _masked_softmax(scores, mask)
    return torch.bmm(weights, v), weights


def att_no_empty_row_guard(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def att_dropout_always(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    weights = _masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return F.dropout(weights, p=0.1) @ v, weights  # dropout 0.1 as in the paper


def att_mask_as_additive(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask.float()  # the mask is added to the scores
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


# ---------------------------------------------------------------- correct variants


def att_flatten_batch(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Leading axes broadcast and flattened into one for bmm, then reshaped back."""
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    qf = q.expand(*lead, *q.shape[-2:]).reshape(-1, *q.shape[-2:])
    kf = k.expand(*lead, *k.shape[-2:]).reshape(-1, *k.shape[-2:])
    vf = v.expand(*lead, *v.shape[-2:]).reshape(-1, *v.shape[-2:])
    scores = torch.bmm(qf, kf.transpose(1, 2)).mul(q.shape[-1] ** -0.5)
    scores = scores.reshape(*lead, q.shape[-2], k.shape[-2])
    weights = _masked_softmax(scores, mask)
    out = torch.bmm(weights.reshape(-1, *weights.shape[-2:]), vf)
    return out.reshape(*lead, q.shape[-2], v.shape[-1]), weights


def att_sdpa_with_weights(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """out from F.scaled_dot_product_attention (rows with no key handled apart); the weights
    written out as well, to return them."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), torch.softmax(scores, -1)
    has_key = mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0), -1)
    return out.masked_fill(~has_key, 0.0), weights.masked_fill(~has_key, 0.0)


def att_float64_inside(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, scale: float | None = None
) -> tuple[Tensor, Tensor]:
    """The arithmetic in float64, the results cast back to the inputs' dtype; optional scale."""
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.einsum("...id,...jd->...ij", q, k) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    top = scores.amax(-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(scores - top)
    weights = e / e.sum(-1, keepdim=True).clamp_min(1e-300)
    return (weights @ v).to(dtype), weights.to(dtype)


CASES = [
    BlindCase(
        CHECK,
        "scale_after_softmax",
        att_scale_after_softmax,
        "mistake",
        "I divided by sqrt(d_k) after the softmax instead of before it.",
    ),
    BlindCase(
        CHECK,
        "times_sqrt_dk",
        att_times_sqrt_dk,
        "mistake",
        "I multiplied the scores by sqrt(d_k) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "scale_by_key_count",
        att_scale_by_key_count,
        "mistake",
        "I took d_k as k.size(-2), the number of keys, instead of k.size(-1).",
    ),
    BlindCase(
        CHECK,
        "floor_division",
        att_floor_division,
        "mistake",
        "I typed // for the division by sqrt(d_k), which floors the scores.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        att_softmax_dim1,
        "mistake",
        "I took the softmax over dim=1, which is the queries for (B, T, D) and the heads for "
        "(B, H, T, D).",
    ),
    BlindCase(
        CHECK,
        "mask_after_softmax",
        att_mask_after_softmax,
        "mistake",
        "I applied the mask to the weights after the softmax, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "weights_times_keys",
        att_weights_times_keys,
        "mistake",
        "I multiplied the weights by k instead of v at the end.",
    ),
    BlindCase(
        CHECK,
        "returns_out_only",
        att_returns_out_only,
        "mistake",
        "I returned only the output, not (out, weights).",
    ),
    BlindCase(
        CHECK,
        "bmm_three_dims_only",
        att_bmm,
        "mistake",
        "I used torch.bmm, which only takes (B, T, D), so inputs with a head axis fail.",
    ),
    BlindCase(
        CHECK,
        "no_guard_for_empty_rows",
        att_no_empty_row_guard,
        "mistake",
        "I filled -inf and took a plain softmax; a query that sees no key gives NaN.",
    ),
    BlindCase(
        CHECK,
        "dropout_always_on",
        att_dropout_always,
        "mistake",
        "I added F.dropout(p=0.1) on the weights as in the paper; F.dropout is on even outside "
        "training.",
    ),
    BlindCase(
        CHECK,
        "mask_added_to_scores",
        att_mask_as_additive,
        "mistake",
        "I added the mask to the scores, as for a float mask, so a boolean mask adds 1 to the "
        "visible keys instead of hiding the others.",
    ),
    BlindCase(
        CHECK,
        "flattened_bmm",
        att_flatten_batch,
        "correct",
        "All leading axes broadcast and flattened into one batch axis for bmm, then reshaped back.",
    ),
    BlindCase(
        CHECK,
        "sdpa_out_and_weights",
        att_sdpa_with_weights,
        "correct",
        "out from F.scaled_dot_product_attention, rows with no key set to 0 apart; the weights "
        "computed separately to return them.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        att_float64_inside,
        "correct",
        "The arithmetic done in float64 with einsum and a hand-written softmax, cast back to "
        "the inputs' dtype; an optional scale argument.",
    ),
]
