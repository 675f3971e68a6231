"""Blind cases for check_masked_softmax (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---- mistakes -------------------------------------------------------------------------------


def over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    has_key = mask.any(dim=-1, keepdim=True)
    s = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(s, dim=-2).masked_fill(~mask, 0.0).masked_fill(~has_key, 0.0)


def polarity_inverted(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = (~mask).any(dim=-1, keepdim=True)
    s = scores.masked_fill(mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(s, dim=-1).masked_fill(~has_key, 0.0)


def fill_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def nan_for_empty_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def nan_to_num_afterwards(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)  # empty rows: NaN -> 0


def zero_out_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys weigh 0 now
    return weights


def fill_zero_instead_of_minus_inf(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    return torch.softmax(scores, dim=-1)


def none_mask_not_handled(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    has_key = mask.any(dim=-1, keepdim=True)
    s = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(s, dim=-1).masked_fill(~has_key, 0.0)


def renormalised_with_epsilon(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    e = torch.exp(scores) * mask  # no max subtracted
    return e / (e.sum(dim=-1, keepdim=True) + 1e-6)


# ---- reader's slip ------------------------------------------------------------------------------


def arguments_swapped(mask: Tensor | None, scores: Tensor) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    s = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return torch.softmax(s, dim=-1).masked_fill(~has_key, 0.0)


# ---- correct variants ---------------------------------------------------------------------------


def finfo_min_then_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    low = torch.finfo(scores.dtype).min
    weights = torch.where(mask, scores, torch.full_like(scores, low)).softmax(-1)
    return weights * mask.to(weights.dtype)  # empty rows were uniform; now all zero


def manual_exp_detached_max(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    s = scores.masked_fill(~mask, float("-inf"))
    m = s.amax(dim=dim, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    total = e.sum(dim=dim, keepdim=True)
    total = torch.where(total == 0, torch.ones_like(total), total)
    return e / total


def where_guarded(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.expand_as(scores)
    empty = ~mask.any(dim=-1, keepdim=True)
    safe = torch.where(mask | empty, scores, scores.new_tensor(float("-inf")))
    weights = torch.softmax(safe, dim=-1)
    return torch.where(empty, torch.zeros_like(weights), weights)


CASES = [
    BlindCase(
        CHECK,
        "over_queries",
        over_queries,
        "mistake",
        "I took the softmax over dim -2, the queries, instead of the keys",
    ),
    BlindCase(
        CHECK,
        "polarity_inverted",
        polarity_inverted,
        "mistake",
        "I filled -inf where the mask is True, reading True as 'blocked'",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9, so a query with no visible key spreads its weight over the padding",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        nan_for_empty_rows,
        "mistake",
        "I filled -inf and took the softmax, so a row with no visible key is NaN",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_afterwards",
        nan_to_num_afterwards,
        "correct",
        "I filled -inf, took the softmax and replaced the NaN rows of fully masked queries by 0 with nan_to_num (masked_fill's backward keeps their gradient at 0)",
    ),
    BlindCase(
        CHECK,
        "zero_out_after_softmax",
        zero_out_after_softmax,
        "mistake",
        "I multiplied the softmax by the mask afterwards without renormalising the rows",
    ),
    BlindCase(
        CHECK,
        "fill_zero_instead_of_minus_inf",
        fill_zero_instead_of_minus_inf,
        "mistake",
        "I filled the masked scores with 0 instead of -inf",
    ),
    BlindCase(
        CHECK,
        "none_mask_not_handled",
        none_mask_not_handled,
        "mistake",
        "I forgot the case mask=None and use the mask straight away",
    ),
    BlindCase(
        CHECK,
        "renormalised_with_epsilon",
        renormalised_with_epsilon,
        "mistake",
        "I exponentiated without subtracting the max, multiplied by the mask and divided by the sum plus 1e-6",
    ),
    BlindCase(
        CHECK,
        "arguments_swapped",
        arguments_swapped,
        "mistake",
        "I wrote the signature as (mask, scores) instead of (scores, mask)",
    ),
    BlindCase(
        CHECK,
        "finfo_min_then_zero",
        finfo_min_then_zero,
        "correct",
        "I filled masked scores with the dtype's smallest finite value and multiplied the weights by the mask",
    ),
    BlindCase(
        CHECK,
        "manual_exp_detached_max",
        manual_exp_detached_max,
        "correct",
        "I wrote the softmax by hand with a detached row max and a guarded denominator, with an extra dim argument",
    ),
    BlindCase(
        CHECK,
        "where_guarded",
        where_guarded,
        "correct",
        "I let empty rows see every key with torch.where and zeroed them after the softmax",
    ),
]
