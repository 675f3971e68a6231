"""Blind set B28, check_masked_softmax (chapter 6): the softmax that gives masked keys weight 0,
as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_zero_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    return (scores * mask).softmax(dim=-1)  # masked scores become 0


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight 0
    return weights


def ms_renormalise_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights.masked_fill(~mask, 0.0)
    total = weights.sum(dim=-1, keepdim=True)
    return weights / total.clamp_min(1e-12)  # renormalise over the visible keys


def ms_unsqueeze_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.unsqueeze(-2)  # (B, T_k) -> (B, 1, T_k): the same keys for every query
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_guard_without_zeroing(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~has_key, 0.0)  # no 0/0 for a row with no key
    return torch.softmax(scores, dim=-1)


def ms_has_key_wrong_axis(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-2, keepdim=True)
    scores = scores.masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        # the most negative number the dtype has: works in float16 too
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1)


def ms_if_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask:
        scores = scores.masked_fill(~mask, float("-inf"))
        has_key = mask.any(dim=-1, keepdim=True)
        weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
        return weights.masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1)


def ms_index_assign(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores[~mask] = float("-inf")  # in place, no copy needed
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_softmax_dim1(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~has_key, 0.0)
        return torch.softmax(scores, dim=1).masked_fill(~has_key, 0.0)  # dim 1: the keys
    return torch.softmax(scores, dim=1)


def ms_mask_required(scores: Tensor, mask: Tensor) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.log_softmax(scores, dim=-1)  # the numerically stable one
    return torch.nan_to_num(weights, nan=0.0, neginf=0.0)


# ---------------------------------------------------------------- correct variants


def ms_where_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    safe = torch.where(mask, scores, torch.zeros_like(scores))
    top = safe.masked_fill(~mask, float("-inf")).amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.where(mask, torch.exp(safe - top), torch.zeros_like(scores))
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_float64_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Computed in double precision and cast back to the scores' dtype."""
    s = scores.double()
    if mask is None:
        return s.softmax(-1).to(scores.dtype)
    visible = mask.expand(s.shape)
    empty = ~visible.any(-1, keepdim=True)
    s = s.masked_fill(~visible | empty, float("-inf")).masked_fill(empty, 0.0)
    return s.softmax(-1).masked_fill(~visible, 0.0).to(scores.dtype)


def ms_logsumexp(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    if mask is None:
        return torch.exp(scores - scores.logsumexp(dim, keepdim=True))
    filled = scores.masked_fill(~mask, float("-inf"))
    some = mask.any(dim, keepdim=True)
    filled = torch.where(some, filled, torch.zeros_like(filled))
    weights = torch.exp(filled - filled.logsumexp(dim, keepdim=True))
    return torch.where(some, weights, torch.zeros_like(weights))


def ms_masked_fill_not(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.nn.functional.softmax(scores, dim=-1)
    blocked = mask.logical_not()
    empty = blocked.all(dim=-1, keepdim=True)
    scores = scores.masked_fill(blocked & ~empty, float("-inf"))
    out = torch.nn.functional.softmax(scores, dim=-1)
    return out.masked_fill(empty, 0)


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)  # empty rows: NaN -> 0


CASES = [
    BlindCase(
        CHECK,
        "multiply_scores_by_mask",
        ms_zero_scores,
        "mistake",
        "I multiplied the scores by the mask so the masked ones are 0 before the softmax.",
    ),
    BlindCase(
        CHECK,
        "zero_weights_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I took the softmax first and multiplied the weights by the mask, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "renormalise_after_softmax",
        ms_renormalise_after,
        "mistake",
        "Softmax over all keys, then zero the masked weights and divide by their sum; when "
        "the masked scores are much larger the visible weights underflow to 0.",
    ),
    BlindCase(
        CHECK,
        "mask_unsqueezed_inside",
        ms_unsqueeze_mask,
        "mistake",
        "I added the query axis to the mask inside the function, mask.unsqueeze(-2), as if it "
        "always came as (B, T_k).",
    ),
    BlindCase(
        CHECK,
        "guard_but_no_zeroing",
        ms_guard_without_zeroing,
        "mistake",
        "I set the scores of a row with no visible key to 0 to avoid 0/0, but forgot to zero "
        "its weights afterwards, so it comes out uniform.",
    ),
    BlindCase(
        CHECK,
        "has_key_over_queries",
        ms_has_key_wrong_axis,
        "mistake",
        "I computed 'has a visible key' with mask.any(dim=-2), over the queries.",
    ),
    BlindCase(
        CHECK,
        "fill_finfo_min",
        ms_finfo_min,
        "mistake",
        "I filled masked scores with torch.finfo(dtype).min instead of -inf, so a row with no "
        "visible key is uniform.",
    ),
    BlindCase(
        CHECK,
        "if_mask_truthiness",
        ms_if_mask,
        "mistake",
        "I wrote `if mask:` instead of `if mask is not None:`.",
    ),
    BlindCase(
        CHECK,
        "index_assign_in_place",
        ms_index_assign,
        "mistake",
        "I set scores[~mask] = -inf in place, which changes the caller's scores (and needs a "
        "mask of the full shape).",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_1",
        ms_softmax_dim1,
        "mistake",
        "I took the softmax over dim=1, the keys of a (T_q, T_k) matrix, which is the queries "
        "once there is a batch axis.",
    ),
    BlindCase(
        CHECK,
        "mask_argument_required",
        ms_mask_required,
        "mistake",
        "I left out the default, so mask must always be given; calling without a mask fails.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I used log_softmax because it is more stable, so it returns log-weights.",
    ),
    BlindCase(
        CHECK,
        "where_and_exp",
        ms_where_exp,
        "correct",
        "exp of the visible scores minus their row maximum, zeros elsewhere, divided by the "
        "row sum (1 for an empty row).",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        ms_float64_inside,
        "correct",
        "Computed in float64 and cast back to the scores' dtype.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_with_dim",
        ms_logsumexp,
        "correct",
        "exp(scores - logsumexp) over the visible keys; an extra dim argument that defaults to -1.",
    ),
    BlindCase(
        CHECK,
        "fill_only_rows_with_a_key",
        ms_masked_fill_not,
        "correct",
        "-inf only where the row has some visible key; empty rows softmaxed as they are and "
        "zeroed after.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after",
        ms_nan_to_num,
        "correct",
        "-inf at the masked keys, then nan_to_num(0.0) on the weights for rows with no visible "
        "key.",
    ),
]
