"""Blind set B20, check_masked_softmax (chapter 6): the masked softmax as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_fill_where_true(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # masked_fill fills where the mask is True
    has_key = (~mask).any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # a masked score of 0
    return torch.softmax(scores, dim=-1)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def ms_nan_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # exp(-inf) = 0 does the rest


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has = mask.expand_as(scores).any(-2, keepdim=True)
    return torch.softmax(scores.masked_fill(~has, 0.0), dim=-2).masked_fill(~has, 0.0)


def ms_mask_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # zero the masked keys
    return weights


def ms_multiply_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0... then
        scores = scores.masked_fill(~mask.expand_as(scores).any(-1, keepdim=True), 0.0)
    return torch.softmax(scores, dim=-1)


def ms_inplace(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        has_key = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~has_key, 0.0)
        return F.log_softmax(scores, dim=-1).exp().masked_fill(~has_key, 0.0)
    return F.log_softmax(scores, dim=-1)  # the stable version


def ms_additive_bool(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores + mask.float()  # an additive mask, as nn.Transformer takes
    has_key = mask.any(-1, keepdim=True)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_empty_rows_uniform(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~has_key, 0.0)  # no NaN: such a row is uniform
    return torch.softmax(scores, dim=-1)


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # empty rows -> 0


def ms_where_finfo(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return F.softmax(scores, dim=-1)
    lowest = torch.finfo(scores.dtype).min
    filled = torch.where(mask, scores, torch.full_like(scores, lowest))
    weights = F.softmax(filled, dim=-1)
    weights = torch.where(mask, weights, torch.zeros_like(weights))  # exact zeros
    return torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    shift = scores.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True)
    shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift)).detach()
    e = torch.exp(scores - shift) * mask
    return e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)


def ms_logsumexp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return (scores - scores.logsumexp(-1, keepdim=True)).exp()
    visible = mask.any(-1, keepdim=True)
    s = scores.masked_fill(~mask, float("-inf")).masked_fill(~visible, 0.0)
    out = torch.exp(s - torch.logsumexp(s, -1, keepdim=True))
    return out * visible


def ms_float64_path(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    s = scores.double()
    if mask is not None:
        s = s.masked_fill(mask.logical_not(), float("-inf"))
        empty = mask.logical_not().all(dim=-1, keepdim=True)
        s = s.masked_fill(empty, 0.0)
        return s.softmax(-1).masked_fill(empty, 0.0).to(scores.dtype)
    return s.softmax(-1).to(scores.dtype)


CASES = [
    BlindCase(
        CHECK,
        "fill_where_true",
        ms_fill_where_true,
        "mistake",
        "I filled -inf where the mask is True.",
    ),
    BlindCase(CHECK, "fill_zero", ms_fill_zero, "mistake", "I set masked scores to 0."),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9 and took the softmax.",
    ),
    BlindCase(
        CHECK,
        "nan_rows",
        ms_nan_rows,
        "mistake",
        "I filled -inf and took the softmax, nothing for rows without a key.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "I replaced the NaN of empty rows after the softmax with nan_to_num.",
    ),
    BlindCase(
        CHECK,
        "over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2.",
    ),
    BlindCase(
        CHECK,
        "zeroed_after_softmax",
        ms_mask_after_softmax,
        "mistake",
        "I took the softmax first and multiplied by the mask afterwards.",
    ),
    BlindCase(
        CHECK,
        "scores_times_mask",
        ms_multiply_scores,
        "mistake",
        "I multiplied the scores by the mask.",
    ),
    BlindCase(
        CHECK,
        "inplace_fill",
        ms_inplace,
        "mistake",
        "I used masked_fill_ on the scores to save memory.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_without_mask",
        ms_log_softmax,
        "mistake",
        "Without a mask I returned log_softmax (I forgot the exp on that branch).",
    ),
    BlindCase(
        CHECK,
        "additive_bool_mask",
        ms_additive_bool,
        "mistake",
        "I added the mask to the scores as an additive mask.",
    ),
    BlindCase(
        CHECK,
        "empty_rows_uniform",
        ms_empty_rows_uniform,
        "mistake",
        "I set empty rows' scores to 0 against the NaN but did not zero their weights.",
    ),
    BlindCase(
        CHECK,
        "where_finfo_min",
        ms_where_finfo,
        "correct",
        "torch.where with finfo.min, then zeros where masked and on empty rows.",
    ),
    BlindCase(
        CHECK,
        "manual_exp",
        ms_manual_exp,
        "correct",
        "exp(scores - max) times the mask over a clamped sum, written by hand.",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        ms_logsumexp,
        "correct",
        "exp(s - logsumexp(s)), multiplied by whether the row has a key.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        ms_float64_path,
        "correct",
        "The softmax in float64, cast back to the scores' dtype; logical_not for the mask.",
    ),
]
