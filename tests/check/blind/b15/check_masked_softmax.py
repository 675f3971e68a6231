"""Blind set B15, check_masked_softmax (chapter 6): the softmax that gives masked keys zero."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def ms_polarity(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is True
    return torch.nan_to_num(scores.softmax(-1), nan=0.0)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-2))


def ms_nan_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # a row with no key is NaN


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return torch.softmax(scores, dim=-1)


def ms_zero_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked weights set to 0 (not renormalised)
    return weights


def ms_inplace(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # edits the caller's scores
    scores.masked_fill_(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.log_softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.log_softmax(scores, dim=-1).masked_fill(~mask | ~has_key, 0.0)


def ms_no_mask_path_wrong(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = scores > 0  # "no mask" read as: keep the positive scores
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- correct variants


def ms_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """torch.where with a finite fill for empty rows."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    any_key = mask.any(dim=-1, keepdim=True)
    neg = torch.full_like(scores, float("-inf"))
    safe = torch.where(any_key, torch.where(mask, scores, neg), torch.zeros_like(scores))
    return torch.where(any_key, safe.softmax(-1), torch.zeros_like(scores))


def ms_renormalise(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """exp of the shifted scores, zeroed at masked keys, divided by a clamped sum."""
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    if mask is not None:
        e = e * mask
    return e / e.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def ms_logsumexp(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """exp(scores - logsumexp) on the visible keys; an extra dim argument with default -1."""
    if mask is None:
        return torch.exp(scores - scores.logsumexp(dim, keepdim=True))
    empty = ~mask.any(dim, keepdim=True)
    visible = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
    w = torch.exp(visible - visible.logsumexp(dim, keepdim=True))
    return w.masked_fill(empty, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9; a row with no visible key becomes uniform.",
    ),
    BlindCase(
        CHECK,
        "mask_polarity",
        ms_polarity,
        "mistake",
        "I filled where the mask is True, treating True as blocked.",
    ),
    BlindCase(
        CHECK, "softmax_over_queries", ms_over_queries, "mistake", "I took the softmax over dim=-2."
    ),
    BlindCase(
        CHECK,
        "nan_rows",
        ms_nan_rows,
        "mistake",
        "I did not handle rows with no visible key; they come out NaN.",
    ),
    BlindCase(
        CHECK,
        "masked_scores_zero",
        ms_fill_zero,
        "mistake",
        "I multiplied the scores by the mask, so masked scores are 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "zeroed_not_renormalised",
        ms_zero_after,
        "mistake",
        "I took the softmax first and then zeroed the masked weights, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "inplace_on_scores",
        ms_inplace,
        "mistake",
        "I used masked_fill_ on the scores passed in, overwriting the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I used log_softmax (I had it from the loss) instead of softmax.",
    ),
    BlindCase(
        CHECK,
        "none_means_positive",
        ms_no_mask_path_wrong,
        "mistake",
        "Without a mask I kept only the positive scores.",
    ),
    BlindCase(
        CHECK,
        "torch_where",
        ms_where,
        "correct",
        "torch.where for the fill and for the empty rows.",
    ),
    BlindCase(
        CHECK,
        "renormalise_clamped",
        ms_renormalise,
        "correct",
        "exp of shifted scores times the mask, divided by a sum clamped away from 0.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_extra_dim",
        ms_logsumexp,
        "correct",
        "exp(scores - logsumexp); an extra dim argument with default -1.",
    ),
]
