"""Blind set B11, check_masked_softmax (chapter 6): the masked softmax as readers write it."""

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
    scores = scores.masked_fill(mask, float("-inf"))  # fill the masked positions
    has_key = torch.isfinite(scores).any(-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # a large negative number, never NaN
    return F.softmax(scores, dim=-1)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-2))


def ms_nan_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # zero out the masked keys
    return weights


def ms_no_mask_returns_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores  # nothing to mask
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return scores.softmax(dim=-1)


def ms_in_place_on_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores.masked_fill_(~mask, float("-inf"))  # saves a copy
    has_key = mask.any(-1, keepdim=True)
    weights = torch.where(has_key, scores, torch.zeros_like(scores)).softmax(-1)
    return weights * has_key


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return F.log_softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    out = F.log_softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return out.masked_fill(~mask, 0.0)  # the numerically stable one


def ms_empty_rows_uniform(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1)  # guard against NaN


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # empty rows: NaN -> 0


def ms_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    has_key = mask.any(dim=-1, keepdim=True)
    filled = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    filled = torch.where(has_key, filled, torch.zeros_like(filled))
    return torch.where(has_key, torch.softmax(filled, dim=-1), torch.zeros_like(filled))


def ms_exp_normalize(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones((), dtype=torch.bool)
    visible = mask.expand_as(scores)
    peak = scores.masked_fill(~visible, float("-inf")).amax(dim=-1, keepdim=True)
    peak = torch.where(torch.isfinite(peak), peak, torch.zeros_like(peak))
    e = torch.exp(scores - peak) * visible  # exactly 0 at masked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_logsumexp_with_dim(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """exp(s - logsumexp(s)) over the visible keys; an extra dim argument, default -1."""
    if mask is None:
        return torch.exp(scores - scores.logsumexp(dim, keepdim=True))
    mask = torch.broadcast_to(mask, scores.shape)
    any_key = mask.any(dim, keepdim=True)
    safe = scores.masked_fill(~mask, float("-inf")).masked_fill(~any_key, 0.0)
    weights = torch.exp(safe - safe.logsumexp(dim, keepdim=True))
    weights = weights.clone()
    weights[~any_key.expand_as(weights)] = 0.0  # in place on my own tensor
    return weights


CASES = [
    BlindCase(
        CHECK,
        "fill_where_true",
        ms_fill_where_true,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'masked'.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9 instead of -inf, so a row with no visible key gets "
        "uniform weights over the masked keys.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2.",
    ),
    BlindCase(
        CHECK,
        "nan_on_empty_rows",
        ms_nan_rows,
        "mistake",
        "I filled -inf and took the softmax, with nothing for a row where every key is masked "
        "(it comes out NaN).",
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the softmax first and multiplied by the mask afterwards, so the rows no longer "
        "sum to 1.",
    ),
    BlindCase(
        CHECK,
        "no_mask_returns_scores",
        ms_no_mask_returns_scores,
        "mistake",
        "When mask is None I returned the scores unchanged, without a softmax.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        ms_fill_zero,
        "mistake",
        "I multiplied the scores by the mask, so masked scores are 0, which still gets weight.",
    ),
    BlindCase(
        CHECK,
        "fills_callers_scores",
        ms_in_place_on_scores,
        "mistake",
        "I used masked_fill_ on the scores to save memory, which overwrites the caller's "
        "tensor with -inf.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I returned log_softmax, which I had read is the stable one, instead of the weights.",
    ),
    BlindCase(
        CHECK,
        "empty_rows_uniform",
        ms_empty_rows_uniform,
        "mistake",
        "I gave an empty row finite scores to avoid NaN but forgot to zero its weights after, "
        "so it is uniform.",
    ),
    BlindCase(
        CHECK,
        "torch_where",
        ms_where,
        "correct",
        "torch.where everywhere, the mask expanded to the scores' shape.",
    ),
    BlindCase(
        CHECK,
        "exp_over_sum_times_mask",
        ms_exp_normalize,
        "correct",
        "The softmax written out: exp(s - max over visible) times the mask, divided by the sum "
        "(1 where the sum is 0).",
    ),
    BlindCase(
        CHECK,
        "logsumexp_extra_dim",
        ms_logsumexp_with_dim,
        "correct",
        "exp(s - logsumexp(s)) over the visible keys, empty rows zeroed in place on a clone; "
        "an extra dim=-1 argument.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_afterwards",
        ms_nan_to_num,
        "correct",
        "-inf fill and a plain softmax, then nan_to_num turns the NaN of an empty row into 0 "
        "(masked_fill already gives such a row a zero gradient).",
    ),
]
