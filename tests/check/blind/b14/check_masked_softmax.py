"""Blind set B14, check_masked_softmax (chapter 6): a softmax in which masked keys weigh 0."""

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


def ms_true_blocks(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    empty = mask.all(-1, keepdim=True)
    return scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)


def ms_nan_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # a row with no key is NaN, which is "undefined"


def ms_zero_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # switch the masked scores off
    return torch.softmax(scores, dim=-1)


def ms_mask_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask  # zero the masked weights


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has = mask.any(dim=-2, keepdim=True)
    w = torch.softmax(scores.masked_fill(~has, 0.0), dim=-2)
    return w.masked_fill(~has, 0.0)


def ms_ignores_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    return torch.softmax(scores, dim=-1)  # the mask is applied by the caller


def ms_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # no copy needed
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.log_softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.log_softmax(scores, dim=-1).masked_fill(~has_key, 0.0)  # stabler


# ---------------------------------------------------------------- correct variants


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    shifted = (
        scores
        - scores.masked_fill(~mask, float("-inf"))
        .amax(-1, keepdim=True)
        .nan_to_num(0.0, posinf=0.0, neginf=0.0)
        .detach()
    )
    e = torch.where(mask, shifted.exp(), torch.zeros_like(scores))
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_renormalised(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """Softmax over all keys, masked weights zeroed, then renormalised (zero rows stay zero)."""
    weights = scores.softmax(dim)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)


def ms_where(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, -1)
    neg = torch.tensor(float("-inf"), dtype=scores.dtype)
    visible = mask.any(-1, keepdim=True)
    safe = torch.where(visible, torch.where(mask, scores, neg), torch.zeros_like(scores))
    out = torch.softmax(safe, -1)
    return torch.where(visible, out, torch.zeros_like(out))


CASES = [
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9, so a row with no visible key becomes uniform.",
    ),
    BlindCase(
        CHECK,
        "true_blocks",
        ms_true_blocks,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'blocked'.",
    ),
    BlindCase(
        CHECK,
        "nan_rows",
        ms_nan_rows,
        "mistake",
        "I filled -inf and took the softmax, leaving NaN in rows with no visible key.",
    ),
    BlindCase(
        CHECK,
        "zero_fill",
        ms_zero_fill,
        "mistake",
        "I set masked scores to 0, thinking a zero score means no attention.",
    ),
    BlindCase(
        CHECK,
        "mask_after",
        ms_mask_after,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2, the queries.",
    ),
    BlindCase(
        CHECK,
        "ignores_mask",
        ms_ignores_mask,
        "mistake",
        "I ignored the mask, thinking the caller already applied it.",
    ),
    BlindCase(
        CHECK,
        "in_place_fill",
        ms_in_place,
        "mistake",
        "I used masked_fill_ on scores, overwriting the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I returned log_softmax, because it is more stable.",
    ),
    BlindCase(
        CHECK,
        "manual_exp",
        ms_manual_exp,
        "correct",
        "exp of the max-shifted scores where visible, divided by their sum (1 if zero).",
    ),
    BlindCase(
        CHECK,
        "renormalised",
        ms_renormalised,
        "correct",
        "Plain softmax, masked weights zeroed, then divided by the row sum; extra dim "
        "argument defaulting to -1.",
    ),
    BlindCase(
        CHECK,
        "nested_where",
        ms_where,
        "correct",
        "torch.where for -inf and for the rows without a key; no type hints.",
    ),
]
