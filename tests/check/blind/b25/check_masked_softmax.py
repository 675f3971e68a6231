"""Blind set B25, check_masked_softmax (chapter 6): the softmax over visible keys as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_mask_times_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return torch.softmax(scores, dim=-1)


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask  # masked keys weigh 0


def ms_renormalise_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-12)  # rows sum to 1 again


def ms_additive_log_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + torch.log(mask.to(scores.dtype))  # an additive mask: 0 or -inf
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # empty rows: NaN -> 0


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_guard_without_zeroing(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    empty = ~mask.any(dim=-1, keepdim=True)
    return torch.softmax(scores.masked_fill(empty, 0.0), dim=-1)  # no NaN any more


def ms_has_key_wrong_axis(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-2, keepdim=True)  # does the query see any key?
    scores = scores.masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_fill_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_true_blocks(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    has_key = (~mask).any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_softmax_dim_1(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~has_key, 0.0)
        return torch.softmax(scores, dim=1).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=1)  # (B, T_q, T_k): dim 1


def ms_float_default_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores)  # no mask: every key visible
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_finite_fill_large(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, -1e4), dim=-1)  # small enough for fp16
    return weights


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return torch.log_softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
    return torch.log_softmax(scores, dim=-1)  # more stable than softmax


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # empty rows: NaN -> 0


def ms_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    low = torch.finfo(scores.dtype).min
    filled = torch.where(mask, scores, torch.full_like(scores, low))
    weights = filled.softmax(dim=-1)
    return torch.where(mask, weights, torch.zeros_like(weights))  # empty rows: all zero


def ms_logsumexp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones((), dtype=torch.bool, device=scores.device)
    visible = scores.masked_fill(~mask, float("-inf"))
    any_key = torch.isfinite(visible).any(dim=-1, keepdim=True)
    safe = visible.masked_fill(~any_key, 0.0)
    weights = torch.exp(safe - torch.logsumexp(safe, dim=-1, keepdim=True))
    return torch.where(any_key, weights, torch.zeros_like(weights))


def ms_exp_over_sum(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    visible = scores.masked_fill(~mask, float("-inf"))
    top = visible.amax(dim=-1, keepdim=True).detach()
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(visible - top)  # exactly 0 at the masked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_float64_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    s = scores.double()
    if mask is not None:
        keep = mask.any(dim=-1, keepdim=True)
        s = s.masked_fill(~mask, float("-inf")).masked_fill(~keep, 0.0)
        return s.softmax(-1).masked_fill(~keep, 0.0).to(scores.dtype)
    return s.softmax(-1).to(scores.dtype)


CASES = [
    BlindCase(
        CHECK,
        "scores_times_mask",
        ms_mask_times_scores,
        "mistake",
        "I multiplied the scores by the mask, which makes a masked score 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "zeroed_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I took the softmax first and then multiplied the weights by the mask, so the rows no "
        "longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "renormalised_after_softmax",
        ms_renormalise_after,
        "mistake",
        "I zeroed the masked weights after the softmax and divided by the new row sum, which "
        "underflows when a masked key has a much larger score.",
    ),
    BlindCase(
        CHECK,
        "additive_log_mask",
        ms_additive_log_mask,
        "mistake",
        "I added log(mask) (0 or -inf) to the scores, as PyTorch's float masks do, and cleaned "
        "an empty row's NaN with nan_to_num: the values are right but its gradient is NaN.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        ms_no_guard,
        "mistake",
        "I filled the masked scores with -inf and did nothing for a row without a visible key.",
    ),
    BlindCase(
        CHECK,
        "guard_without_zeroing",
        ms_guard_without_zeroing,
        "mistake",
        "I set an empty row's scores to 0 to avoid NaN but forgot to zero its weights after the "
        "softmax, so it is uniform.",
    ),
    BlindCase(
        CHECK,
        "has_key_over_queries",
        ms_has_key_wrong_axis,
        "mistake",
        "I looked for visible keys with mask.any(dim=-2), along the queries, instead of dim=-1.",
    ),
    BlindCase(
        CHECK,
        "masked_fill_in_place",
        ms_fill_in_place,
        "mistake",
        "I used masked_fill_ on the scores, which writes -inf into the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "true_means_blocked",
        ms_true_blocks,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'masked'.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        ms_softmax_dim_1,
        "mistake",
        "I wrote softmax(dim=1), thinking of (B, T_q, T_k) scores, instead of the last axis.",
    ),
    BlindCase(
        CHECK,
        "float_default_mask",
        ms_float_default_mask,
        "mistake",
        "With no mask I built one with torch.ones_like(scores), a float tensor, so ~mask fails "
        "when the mask is left out.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e4",
        ms_finite_fill_large,
        "mistake",
        "I filled masked scores with -1e4 so that it also works in half precision.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I returned log_softmax, which I read is more stable, instead of the probabilities.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after_fill",
        ms_nan_to_num,
        "correct",
        "-inf filled with masked_fill, then nan_to_num on the weights for an empty row (the "
        "fill passes no gradient to masked scores, so no NaN reaches them).",
    ),
    BlindCase(
        CHECK,
        "finfo_min_and_where",
        ms_finfo_min,
        "correct",
        "The lowest finite number of the dtype instead of -inf, then torch.where to zero the "
        "masked keys (and with them an empty row).",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        ms_logsumexp,
        "correct",
        "exp(scores - logsumexp) over the visible keys, an empty row set to zeros.",
    ),
    BlindCase(
        CHECK,
        "exp_over_sum",
        ms_exp_over_sum,
        "correct",
        "The softmax written out: exp of the masked scores minus the row maximum, divided by the "
        "row sum, or by 1 when the row is empty.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        ms_float64_inside,
        "correct",
        "Computed in float64 and cast back to the scores' dtype.",
    ),
]
