"""Blind set B33, check_masked_softmax (chapter 6): a softmax that gives masked keys weight 0, as
readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2)
    return torch.nan_to_num(weights)


def ms_fill_where_true(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # masked_fill fills where the mask is set
    has_key = (~mask).any(-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # a very negative number, no inf trouble
    return torch.softmax(scores, dim=-1)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get exactly 0
    return weights


def ms_zero_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return torch.softmax(scores, dim=-1)


def ms_mask_required(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_additive_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask  # an attention mask is added to the scores
    return torch.softmax(scores, dim=-1)


def ms_float32(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.float()  # softmax in float32
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_sum_without_dim(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    e = torch.exp(scores)
    if mask is not None:
        e = e * mask
    return e / e.sum()  # normalize the exponentials


def ms_in_place_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no need for a copy
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_unsqueezes_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.unsqueeze(-2)  # (B, T_k) -> (B, 1, T_k): the same keys for every query
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- correct variants


def ms_where_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """torch.where instead of masked_fill; empty rows get finite scores and then zeros."""
    if mask is None:
        return scores.softmax(dim=-1)
    neg_inf = torch.full_like(scores, float("-inf"))
    scores = torch.where(mask, scores, neg_inf)
    empty = ~mask.any(dim=-1, keepdim=True)
    scores = torch.where(empty, torch.zeros_like(scores), scores)
    weights = scores.softmax(dim=-1)
    return torch.where(empty, torch.zeros_like(weights), weights)


def ms_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """The smallest finite number of the dtype as the fill; empty rows zeroed after."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(filled, dim=-1)
    return weights * mask.any(dim=-1, keepdim=True)


def ms_renormalise(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Softmax over every key, masked weights zeroed, the rest renormalised (the book says
    this is equal in exact arithmetic); a row with nothing left stays 0."""
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    total = weights.sum(dim=-1, keepdim=True)
    return weights / total.clamp_min(torch.finfo(weights.dtype).tiny)


def ms_nan_to_num_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """-inf fill, and the NaN rows of keyless queries turned into zeros after the softmax (the
    masked_fill passes no gradient back to those rows, so none is NaN)."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # empty rows -> 0


def ms_logsumexp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """exp(score - logsumexp over the visible keys), zeros where masked."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    visible = scores.masked_fill(~mask, float("-inf"))
    any_key = mask.any(dim=-1, keepdim=True)
    lse = torch.logsumexp(visible.masked_fill(~any_key, 0.0), dim=-1, keepdim=True)
    return torch.exp(visible - lse).masked_fill(~(mask & any_key), 0.0)


CASES = [
    BlindCase(
        CHECK,
        "over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2 and replaced NaNs by zeros.",
    ),
    BlindCase(
        CHECK,
        "fill_where_true",
        ms_fill_where_true,
        "mistake",
        "I filled -inf where the mask is True, since masked_fill fills where it is set.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9 instead of -inf to avoid NaNs.",
    ),
    BlindCase(
        CHECK,
        "no_guard",
        ms_no_guard,
        "mistake",
        "I filled with -inf and took the softmax, nothing special for rows with no visible key.",
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I multiplied the softmax by the mask afterwards, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "zero_scores",
        ms_zero_scores,
        "mistake",
        "I multiplied the scores by the mask, so masked scores are 0 before the softmax.",
    ),
    BlindCase(
        CHECK,
        "mask_required",
        ms_mask_required,
        "mistake",
        "I wrote it for a mask and did not handle mask=None.",
    ),
    BlindCase(
        CHECK,
        "additive_mask",
        ms_additive_mask,
        "mistake",
        "I added the mask to the scores, the way an attention mask is added.",
    ),
    BlindCase(
        CHECK,
        "float32",
        ms_float32,
        "mistake",
        "I cast the scores to float32 first so the softmax runs in single precision.",
    ),
    BlindCase(
        CHECK,
        "sum_without_dim",
        ms_sum_without_dim,
        "mistake",
        "I divided the masked exponentials by e.sum(), forgetting dim=-1.",
    ),
    BlindCase(
        CHECK,
        "in_place_fill",
        ms_in_place_fill,
        "mistake",
        "I used masked_fill_ on the scores to avoid a copy.",
    ),
    BlindCase(
        CHECK,
        "unsqueezes_mask",
        ms_unsqueezes_mask,
        "mistake",
        "I added a query axis to the mask with unsqueeze(-2), thinking of a (B, T_k) padding mask.",
    ),
    BlindCase(
        CHECK,
        "where_guard",
        ms_where_guard,
        "correct",
        "torch.where for the -inf fill; rows with no visible key get zeros before and after.",
    ),
    BlindCase(
        CHECK,
        "finfo_min",
        ms_finfo_min,
        "correct",
        "The masked scores filled with torch.finfo(dtype).min, empty rows multiplied by 0.",
    ),
    BlindCase(
        CHECK,
        "renormalise",
        ms_renormalise,
        "correct",
        "Softmax over every key, the masked weights zeroed, the rest divided by their sum "
        "(clamped so an empty row stays 0).",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        ms_logsumexp,
        "correct",
        "exp(score - logsumexp of the visible scores), and 0 where masked.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after",
        ms_nan_to_num_after,
        "correct",
        "I let the rows with no visible key become NaN and turned them into zeros with "
        "nan_to_num after the softmax.",
    ),
]
