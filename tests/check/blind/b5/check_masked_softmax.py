"""Chapter 6, "Your turn": ``masked_softmax(scores, mask=None)``.

Softmax over the last axis; masked keys (mask False) get weight exactly 0; the mask broadcasts;
a row with no visible key gets all-zero weights and no NaN gradient.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# --- mistakes ---------------------------------------------------------------------------------


def dtype_minimum_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    lowest = torch.finfo(scores.dtype).min  # the most negative number the dtype has
    return scores.masked_fill(~mask, lowest).softmax(dim=-1)


def zeroed_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights * mask  # hide the masked keys
    return weights


def renormalised_without_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = scores.softmax(dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True)  # 0 / 0 on a row without keys


def fills_where_mask_is_true(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(mask, float("-inf"))
    has_key = (~mask).any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def softmax_down_the_columns(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-2, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-2)
    return weights.masked_fill(~has_key, 0.0)


def ones_like_default_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores)  # "no mask" = everything visible
    scores = scores.masked_fill(~mask, float("-inf"))  # ~ of a float tensor fails
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def boolean_index_assignment(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores[~mask] = -1e9  # boolean indexing needs the mask at the full shape of the scores
    weights = torch.softmax(scores, dim=-1)
    return weights * mask.any(dim=-1, keepdim=True)


def in_place_on_callers_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # saves a copy
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def log_softmax_used(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.log_softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.log_softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~mask, 0.0)  # log-probabilities, masked to 0


def mask_always_unsqueezed(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.unsqueeze(-2)  # a padding mask (B, T_k) needs a query axis
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


# --- correct variants -------------------------------------------------------------------------


def nan_to_num_afterwards(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    return torch.nan_to_num(weights, nan=0.0)  # rows with no key: NaN -> 0


def exp_with_safe_division(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    hidden = scores.masked_fill(~mask, float("-inf"))
    top = hidden.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top)).detach()
    e = torch.exp(hidden - top)  # exactly 0 at masked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))  # empty rows: 0 / 1


def lowest_fill_then_zeroed(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    filled = torch.where(mask, scores, torch.finfo(scores.dtype).min)
    weights = filled.softmax(-1)
    return weights * mask  # masked keys exactly 0, and rows without keys all 0


def where_guarded(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.to(torch.bool).expand_as(scores)
    has_key = mask.any(dim=-1, keepdim=True)
    safe = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    safe = torch.where(has_key, safe, torch.zeros_like(scores))
    return torch.where(has_key, torch.softmax(safe, dim=-1), torch.zeros_like(scores))


CASES = [
    BlindCase(
        CHECK,
        "dtype_minimum_fill",
        dtype_minimum_fill,
        "mistake",
        "I filled masked scores with torch.finfo(dtype).min instead of -inf, so a row with no "
        "visible key gets uniform weights over the hidden keys.",
    ),
    BlindCase(
        CHECK,
        "zeroed_after_softmax",
        zeroed_after_softmax,
        "mistake",
        "I took the plain softmax and multiplied by the mask afterwards, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "renormalised_without_guard",
        renormalised_without_guard,
        "mistake",
        "I multiplied the softmax by the mask and renormalised, which divides 0 by 0 for a row "
        "with no visible key.",
    ),
    BlindCase(
        CHECK,
        "fills_where_mask_is_true",
        fills_where_mask_is_true,
        "mistake",
        "I read the mask as True = hidden (nn.MultiheadAttention's polarity) and filled those "
        "scores with -inf.",
    ),
    BlindCase(
        CHECK,
        "softmax_down_the_columns",
        softmax_down_the_columns,
        "mistake",
        "I took the softmax over dim=-2 (the queries) instead of the last axis.",
    ),
    BlindCase(
        CHECK,
        "ones_like_default_mask",
        ones_like_default_mask,
        "mistake",
        "For mask=None I made torch.ones_like(scores), a float mask, on which ~ then fails.",
    ),
    BlindCase(
        CHECK,
        "boolean_index_assignment",
        boolean_index_assignment,
        "mistake",
        "I wrote scores[~mask] = -1e9, which changes the caller's scores in place and needs the "
        "mask at the scores' full shape.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_callers_scores",
        in_place_on_callers_scores,
        "mistake",
        "I used masked_fill_ (in place) on the scores I was given, overwriting the caller's "
        "tensor.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_used",
        log_softmax_used,
        "mistake",
        "I used log_softmax instead of softmax, so the weights are log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "mask_always_unsqueezed",
        mask_always_unsqueezed,
        "mistake",
        "I always inserted a query axis into the mask with unsqueeze(-2), expecting a (B, T_k) "
        "padding mask, which breaks a mask that already has its query axis.",
    ),
    BlindCase(
        CHECK,
        "exp_with_safe_division",
        exp_with_safe_division,
        "correct",
        "I wrote the softmax by hand: exp of the scores minus the (detached) visible maximum, "
        "divided by the sum, or by 1 on a row with no visible key.",
    ),
    BlindCase(
        CHECK,
        "lowest_fill_then_zeroed",
        lowest_fill_then_zeroed,
        "correct",
        "I filled hidden scores with finfo.min and multiplied the weights by the mask afterwards, "
        "which zeroes both hidden keys and empty rows.",
    ),
    BlindCase(
        CHECK,
        "where_guarded",
        where_guarded,
        "correct",
        "I expanded the mask to the scores' shape and used torch.where three times (hide, guard "
        "empty rows, zero them).",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_afterwards",
        nan_to_num_afterwards,
        "correct",
        "I filled hidden scores with -inf and turned the NaN of rows without a visible key into 0 "
        "with nan_to_num (masked_fill's backward zeroes the gradient there).",
    ),
]
