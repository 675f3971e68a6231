"""Blind set B9, check_masked_softmax (chapter 6): softmax over the keys with a boolean mask."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"

# ---------------------------------------------------------------- mistakes


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-2).masked_fill(~mask, 0.0).masked_fill(~has_key, 0.0)


def ms_polarity(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    visible = ~mask  # I read True as "masked out"
    has_key = visible.any(-1, keepdim=True)
    scores = scores.masked_fill(mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def ms_inf_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # a row with no key: 0/0


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # hidden keys get 0 (rows no longer sum to 1)
    return weights


def ms_add_bool_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask.float()  # an additive mask, as in Hugging Face code
    return torch.softmax(scores, dim=-1)


def ms_boolean_index(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.clone()
    if mask is not None:
        scores[~mask] = float("-inf")  # needs a mask of the same shape as scores
        scores[~mask.any(-1)] = 0.0
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask.any(-1, keepdim=True)
    return weights


def ms_where_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = torch.where(mask, scores, torch.zeros_like(scores))  # masked score = 0
    return torch.softmax(scores, dim=-1)


def ms_if_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask:  # "if there is a mask"
        has_key = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1)


def ms_implicit_dim(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        has_key = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return F.softmax(scores).masked_fill(~has_key, 0.0)  # no dim: 0 for 3-D input
    return F.softmax(scores)


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a row with no key: NaN -> 0


def ms_where_inf(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    mask = mask.expand_as(scores)
    neg = torch.full_like(scores, float("-inf"))
    any_key = mask.any(dim=-1, keepdim=True)
    safe = torch.where(any_key, torch.where(mask, scores, neg), torch.zeros_like(scores))
    return torch.where(any_key, safe.softmax(-1), torch.zeros_like(scores))


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    s = scores.masked_fill(~mask, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m)).detach()
    e = torch.exp(s - m)  # exactly 0 at masked keys
    return e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny)


def ms_float64_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    s = scores.double()
    if mask is not None:
        empty = ~mask.any(-1, keepdim=True)
        s = s.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
        return s.softmax(-1).masked_fill(empty, 0.0).to(scores.dtype)
    return s.softmax(-1).to(scores.dtype)


def ms_clone_inplace(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    out = scores.clone()
    if mask is None:
        return out.softmax(dim=-1)
    out.masked_fill_(~mask, float("-inf"))
    empty = ~mask.any(dim=-1, keepdim=True)
    out.masked_fill_(empty, 0.0)
    return out.softmax(dim=-1).masked_fill(empty, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2 (the queries) instead of -1 (the keys).",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        ms_polarity,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'hidden'.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9 (as in many tutorials); a row with no "
        "visible key then spreads its weight evenly over the hidden keys.",
    ),
    BlindCase(
        CHECK,
        "inf_without_guard",
        ms_inf_no_guard,
        "mistake",
        "I filled -inf and called softmax with no guard, so a row with no visible key is NaN.",
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I took the plain softmax and multiplied by the mask afterwards, without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "bool_mask_added",
        ms_add_bool_mask,
        "mistake",
        "I added the mask to the scores as floats (scores + mask.float()), as if it were "
        "an additive 0/-inf mask.",
    ),
    BlindCase(
        CHECK,
        "boolean_indexing",
        ms_boolean_index,
        "mistake",
        "I wrote scores[~mask] = -inf, which only works when the mask has the full shape "
        "of the scores, not a broadcastable one.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        ms_where_zero,
        "mistake",
        "I set the masked scores to 0 with torch.where instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "if_mask_truthiness",
        ms_if_mask,
        "mistake",
        "I wrote `if mask:` to test for a mask, which raises for a tensor of many elements.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_dim",
        ms_implicit_dim,
        "mistake",
        "I called F.softmax(scores) without dim; it picks dim=0 for 3-D scores.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after_softmax",
        ms_nan_to_num,
        "correct",
        "I filled -inf and turned the NaN of a row with no visible key into 0 with "
        "nan_to_num after the softmax (the masked_fill stops the NaN in the gradient).",
    ),
    BlindCase(
        CHECK,
        "nested_where",
        ms_where_inf,
        "correct",
        "I expanded the mask and used torch.where twice instead of masked_fill.",
    ),
    BlindCase(
        CHECK,
        "manual_exp_stable",
        ms_manual_exp,
        "correct",
        "I wrote the softmax by hand: subtract the row max, exp (0 at hidden keys), "
        "divide by a sum clamped away from 0.",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        ms_float64_inside,
        "correct",
        "I computed in float64 and cast the weights back to the scores' dtype.",
    ),
    BlindCase(
        CHECK,
        "clone_then_inplace",
        ms_clone_inplace,
        "correct",
        "I cloned the scores and used masked_fill_ in place on the copy.",
    ),
]
