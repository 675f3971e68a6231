"""Blind set B22, check_masked_softmax (chapter 6): the masked softmax as readers write it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"

# ---------------------------------------------------------------- mistakes


def ms_inverted(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is True
    empty = (~mask).logical_not().all(-1, keepdim=True)
    return scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)


def ms_fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # no NaN, no special case
    return torch.softmax(scores, dim=-1)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-2)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.nan_to_num(scores.softmax(-2)).masked_fill(~mask, 0.0)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # an empty row gives NaN


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask  # masked keys weigh 0


def ms_mask_unused(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    return torch.softmax(scores, dim=-1)


def ms_multiply_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return torch.softmax(scores, dim=-1)


def ms_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # saves a copy
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_scaled(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores / math.sqrt(scores.shape[-1])  # scale here so attention need not
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def ms_guard_wrong_axis(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    mask = mask.expand_as(scores)
    has_key = mask.any(-2, keepdim=True)  # looked for a visible key along the wrong axis
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.nan_to_num(scores.softmax(-1)).masked_fill(~has_key, 0.0)


def ms_padding_unsqueeze(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    mask = mask.unsqueeze(-2)  # (B, T_k) -> (B, 1, T_k), one row for all queries
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- correct variants


def ms_where_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    visible = torch.where(mask, scores, torch.full_like(scores, -torch.inf))
    visible_max = visible.amax(-1, True)
    visible_max = torch.where(torch.isinf(visible_max), torch.zeros_like(visible_max), visible_max)
    e = torch.exp(visible - visible_max)  # exactly 0 at masked keys
    return e / e.sum(-1, keepdim=True).clamp_min(1e-30)


def ms_finfo_min(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1) * mask  # a fully masked row: uniform * 0 = 0


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # NaN rows -> 0


def ms_logsumexp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return (scores - scores.logsumexp(-1, keepdim=True)).exp()
    has_key = mask.any(dim=-1, keepdim=True)
    s = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    w = (s - s.logsumexp(-1, keepdim=True)).exp()
    return torch.where(has_key, w, torch.zeros_like(w))


CASES = [
    BlindCase(
        CHECK,
        "inverted",
        ms_inverted,
        "mistake",
        "I filled -inf where the mask is True (PyTorch's nn.MultiheadAttention polarity).",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9 and skipped the empty-row case.",
    ),
    BlindCase(CHECK, "over_queries", ms_over_queries, "mistake", "I took the softmax over dim -2."),
    BlindCase(
        CHECK,
        "no_guard",
        ms_no_guard,
        "mistake",
        "-inf fill and softmax, with nothing for rows that see no key (NaN).",
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalizing.",
    ),
    BlindCase(
        CHECK,
        "mask_unused",
        ms_mask_unused,
        "mistake",
        "I accepted the mask argument but never used it.",
    ),
    BlindCase(
        CHECK,
        "multiply_scores",
        ms_multiply_scores,
        "mistake",
        "I multiplied the scores by the mask, so masked scores are 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        ms_in_place,
        "mistake",
        "I used masked_fill_ on scores, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "scaled",
        ms_scaled,
        "mistake",
        "I divided the scores by sqrt(T_k) inside the softmax helper.",
    ),
    BlindCase(
        CHECK,
        "guard_wrong_axis",
        ms_guard_wrong_axis,
        "mistake",
        "My check for rows with no visible key used any(-2) instead of any(-1).",
    ),
    BlindCase(
        CHECK,
        "padding_unsqueeze",
        ms_padding_unsqueeze,
        "mistake",
        "I assumed a (B, T_k) padding mask and always unsqueezed it at -2.",
    ),
    BlindCase(
        CHECK,
        "where_exp",
        ms_where_exp,
        "correct",
        "A hand-written softmax: max over visible keys, exp, zero masked, clamp the sum.",
    ),
    BlindCase(
        CHECK,
        "finfo_min",
        ms_finfo_min,
        "correct",
        "Fill with the dtype's smallest number, softmax, then multiply by the mask.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "-inf fill and softmax, then nan_to_num turns the NaN of empty rows into 0.",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        ms_logsumexp,
        "correct",
        "exp(s - logsumexp(s)) with the empty rows set to zero.",
    ),
]
