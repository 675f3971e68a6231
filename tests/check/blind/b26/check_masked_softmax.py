"""Blind set B26, check_masked_softmax (chapter 6): the softmax that weights masked keys 0, as
readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_fill_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    lowest = torch.finfo(scores.dtype).min  # the most negative number, safer than -inf
    return scores.masked_fill(~mask, lowest).softmax(-1)


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get 0
    return weights


def ms_renormalise(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True)  # rows sum to 1 again


def ms_additive_inf_bias(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    bias = torch.zeros_like(scores).masked_fill(~mask, float("-inf"))  # an additive mask
    weights = (scores + bias).softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    return torch.where(has_key, weights, torch.zeros_like(weights))


def ms_softmax_dim_1(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=1))  # dim 1: the keys of (T_q, T_k)


def ms_fill_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    scores.masked_fill_(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def ms_no_none_branch(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return F.log_softmax(scores, dim=-1)  # the numerically stable softmax


def ms_zero_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return torch.softmax(scores, dim=-1)


def ms_empty_rows_other_axis(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-2, keepdim=True)  # a key that some query may see
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_mask_polarity_sdpa_float(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask.float()  # a float mask is added to the scores
    return torch.softmax(scores, dim=-1)


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return F.softmax(scores, dim=-1)
    weights = F.softmax(scores.masked_fill(mask.logical_not(), float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # an all-masked row is 0/0


def ms_exp_by_hand(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    visible = torch.where(mask, scores, torch.zeros_like(scores))
    top = torch.where(mask, scores, torch.full_like(scores, float("-inf"))).amax(-1, keepdim=True)
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top).detach()
    e = torch.exp(visible - top) * mask
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_lowest_then_mask(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    if mask is None:
        return scores.softmax(dim)
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return filled.softmax(dim) * mask  # an all-masked row was uniform; the mask zeroes it


CASES = [
    BlindCase(
        CHECK,
        "fill_dtype_min",
        ms_fill_finfo_min,
        "mistake",
        "I filled masked scores with torch.finfo(dtype).min instead of -inf, so a row with no "
        "visible key comes out uniform.",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the plain softmax and multiplied it by the mask, so the rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "renormalise_after_masking",
        ms_renormalise,
        "mistake",
        "I multiplied the softmax by the mask and divided by the new row sums, which is 0/0 "
        "for a row with no visible key.",
    ),
    BlindCase(
        CHECK,
        "additive_inf_bias",
        ms_additive_inf_bias,
        "mistake",
        "I added a bias of 0 / -inf to the scores and zeroed the empty rows with torch.where, "
        "so their gradient is NaN.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        ms_softmax_dim_1,
        "mistake",
        "I wrote the softmax over dim=1, which is the keys only for 2-D scores.",
    ),
    BlindCase(
        CHECK,
        "masked_fill_in_place",
        ms_fill_in_place,
        "mistake",
        "I used masked_fill_ on the scores in place, so the caller's scores are overwritten.",
    ),
    BlindCase(
        CHECK,
        "no_branch_for_none",
        ms_no_none_branch,
        "mistake",
        "I forgot the mask=None case and use ~mask straight away.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I used F.log_softmax since it is the stable one, so I return log-weights.",
    ),
    BlindCase(
        CHECK,
        "zero_masked_scores",
        ms_zero_scores,
        "mistake",
        "I multiplied the scores by the mask, so masked keys get a score of 0.",
    ),
    BlindCase(
        CHECK,
        "empty_rows_over_queries",
        ms_empty_rows_other_axis,
        "mistake",
        "I looked for rows with no visible key with mask.any(dim=-2), over the queries.",
    ),
    BlindCase(
        CHECK,
        "mask_added_as_float",
        ms_mask_polarity_sdpa_float,
        "mistake",
        "I turned the mask into floats and added it to the scores, as for a float attn_mask.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "-inf fill, then nan_to_num turns the 0/0 of an all-masked row into zeros.",
    ),
    BlindCase(
        CHECK,
        "exp_by_hand",
        ms_exp_by_hand,
        "correct",
        "exp(score - max over the visible keys) times the mask, divided by the row sum where "
        "it is positive.",
    ),
    BlindCase(
        CHECK,
        "lowest_then_times_mask",
        ms_lowest_then_mask,
        "correct",
        "The dtype's lowest value as the fill, then the weights multiplied by the mask; an "
        "extra dim argument defaults to -1.",
    ),
]
