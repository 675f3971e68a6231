"""Blind set B12, check_masked_softmax (chapter 6): softmax over the keys with a boolean mask."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-2))


def ms_polarity(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # hide what the mask marks
    empty = torch.isinf(scores).all(-1, keepdim=True)
    return scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return F.softmax(scores, dim=-1)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # a row without keys is NaN


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask  # zero the masked keys


def ms_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_add_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask.to(scores.dtype)  # an additive mask
    return torch.softmax(scores, dim=-1)


def ms_requires_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0).softmax(-1).masked_fill(~has_key, 0)


def ms_empty_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-2, keepdim=True)  # looked for a visible key over the wrong axis
    scores = torch.where(has_key, scores, torch.zeros_like(scores))
    return torch.nan_to_num(scores.softmax(-1))


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # NaN rows become 0


def ms_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    mask = mask.expand_as(scores)
    visible = mask.any(dim=-1, keepdim=True)
    safe = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    safe = torch.where(visible, safe, torch.zeros_like(scores))
    return torch.where(visible, safe.softmax(dim=-1), torch.zeros_like(scores))


def ms_renormalise(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def ms_exp_max(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    filled = scores.masked_fill(~mask, float("-inf"))
    top = filled.amax(dim=dim, keepdim=True).detach()
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(scores - top) * mask
    return e / e.sum(dim=dim, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)


CASES = [
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2 (the queries).",
    ),
    BlindCase(
        CHECK,
        "polarity",
        ms_polarity,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'hidden'.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9, so a row with no key spreads over the padding.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        ms_no_guard,
        "mistake",
        "I filled -inf and took the softmax; a row with no visible key comes out NaN.",
    ),
    BlindCase(
        CHECK,
        "multiply_after_softmax",
        ms_multiply_after,
        "mistake",
        "I took the softmax first and multiplied by the mask, so rows no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_scores",
        ms_in_place,
        "mistake",
        "I used masked_fill_ in place on scores, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "added_mask",
        ms_add_mask,
        "mistake",
        "I added the boolean mask to the scores as if it were an additive mask.",
    ),
    BlindCase(
        CHECK,
        "crashes_without_mask",
        ms_requires_mask,
        "mistake",
        "I never handled mask=None, so the call without a mask fails.",
    ),
    BlindCase(
        CHECK,
        "empty_rows_wrong_axis",
        ms_empty_over_queries,
        "mistake",
        "I looked for rows without a visible key with any(dim=-2) instead of dim=-1.",
    ),
    BlindCase(
        CHECK,
        "torch_where",
        ms_where,
        "correct",
        "torch.where throughout, mask expanded to the scores' shape.",
    ),
    BlindCase(
        CHECK,
        "renormalise",
        ms_renormalise,
        "correct",
        "Plain softmax, masked keys zeroed, each row divided by its (clamped) sum.",
    ),
    BlindCase(
        CHECK,
        "exp_minus_max",
        ms_exp_max,
        "correct",
        "exp(score - visible max) times the mask over a clamped sum; an extra dim argument.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "-inf fill, plain softmax, then nan_to_num turns an empty row's NaN into zeros "
        "(the gradient stays finite since masked_fill's backward zeroes the filled "
        "positions).",
    ),
]
