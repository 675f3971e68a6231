"""Blind set B8, check_masked_softmax (chapter 6): softmax over the keys with boolean masks."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def fills_where_mask_true(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # True = blocked, as in nn.Transformer
    has_key = (~mask).any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def minus_1e9_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def no_guard_for_empty_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def softmax_then_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked weights become 0, rows no longer sum to 1
    return weights


def none_mask_not_handled(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def in_place_fill_on_input(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # writes into the caller's scores
    scores.masked_fill_(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def log_softmax_used(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.log_softmax(scores, dim=-1)


def has_key_without_keepdim(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(dim=-1)  # (..., T_q): forgot keepdim
    scores = scores.masked_fill(~mask, float("-inf"))
    scores = torch.where(has_key.unsqueeze(-1), scores, torch.zeros_like(scores))
    return torch.where(has_key, torch.softmax(scores, dim=-1), 0.0)


def multiply_scores_by_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0 instead of -inf
    return torch.softmax(scores, dim=-1)


def softmax_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-2, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-2).masked_fill(~has_key, 0.0)


def mask_always_unsqueezed(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    mask = mask.unsqueeze(-2)  # so that a (B, T_k) padding mask fits (B, T_q, T_k)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


# ---------------------------------------------------------------- correct variants


def where_and_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.expand_as(scores)
    empty = ~mask.any(dim=-1, keepdim=True)
    filled = torch.where(mask | empty, scores, torch.full_like(scores, float("-inf")))
    weights = torch.softmax(filled, dim=-1)
    return torch.where(empty, torch.zeros_like(weights), weights)


def exp_by_hand_float64(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    s = scores.double()
    if mask is None:
        mask = torch.ones_like(s, dtype=torch.bool)
    mask = mask.expand_as(s)
    row_max = s.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(s - row_max).masked_fill(~mask, 0.0)
    total = e.sum(-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return weights.to(scores.dtype)


def min_value_fill_then_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    lowest = torch.finfo(scores.dtype).min
    weights = scores.masked_fill(~mask, lowest).softmax(dim=-1)
    return weights * mask  # masked keys exactly 0, empty rows all 0


def nan_to_num_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    # an empty row is NaN here; masked_fill already cut its gradient path to the scores
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)


CASES = [
    BlindCase(
        CHECK,
        "fills_where_mask_true",
        fills_where_mask_true,
        "mistake",
        "I filled -inf where the mask is True, the nn.Transformer polarity (True = blocked)",
    ),
    BlindCase(
        CHECK,
        "minus_1e9_fill",
        minus_1e9_fill,
        "mistake",
        "I filled the masked scores with -1e9 as many tutorials do; a row with no visible "
        "key becomes uniform over the padding",
    ),
    BlindCase(
        CHECK,
        "no_guard_for_empty_rows",
        no_guard_for_empty_rows,
        "mistake",
        "-inf fill and softmax, but nothing for a row with no visible key (NaN)",
    ),
    BlindCase(
        CHECK,
        "softmax_then_zero",
        softmax_then_zero,
        "mistake",
        "I took the softmax first and multiplied by the mask afterwards, without renormalizing",
    ),
    BlindCase(
        CHECK,
        "none_mask_not_handled",
        none_mask_not_handled,
        "mistake",
        "I always used ~mask and forgot the mask=None case (it raises)",
    ),
    BlindCase(
        CHECK,
        "in_place_fill_on_input",
        in_place_fill_on_input,
        "mistake",
        "I used masked_fill_ (in place) on the scores I was given, so the caller's tensor "
        "is overwritten (and autograd fails on a leaf)",
    ),
    BlindCase(
        CHECK,
        "log_softmax_used",
        log_softmax_used,
        "mistake",
        "I used torch.log_softmax instead of torch.softmax",
    ),
    BlindCase(
        CHECK,
        "has_key_without_keepdim",
        has_key_without_keepdim,
        "mistake",
        "my final where used mask.any(-1) without keepdim, so it broadcasts over the wrong axis",
    ),
    BlindCase(
        CHECK,
        "multiply_scores_by_mask",
        multiply_scores_by_mask,
        "mistake",
        "I multiplied the scores by the mask before the softmax, so masked keys get score 0, "
        "not -inf",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        softmax_over_queries,
        "mistake",
        "I normalized over dim=-2 (queries) instead of the keys",
    ),
    BlindCase(
        CHECK,
        "mask_always_unsqueezed",
        mask_always_unsqueezed,
        "mistake",
        "I always did mask.unsqueeze(-2), assuming a (B, T_k) padding mask; masks that "
        "already have a query axis then broadcast wrongly",
    ),
    BlindCase(
        CHECK,
        "where_and_guard",
        where_and_guard,
        "correct",
        "torch.where with a -inf tensor, empty rows kept finite, then zeroed with where",
    ),
    BlindCase(
        CHECK,
        "exp_by_hand_float64",
        exp_by_hand_float64,
        "correct",
        "exp by hand in float64 with the max over visible keys, masked to 0, safe "
        "division, cast back",
    ),
    BlindCase(
        CHECK,
        "min_value_fill_then_zero",
        min_value_fill_then_zero,
        "correct",
        "fill with finfo.min (not -inf), softmax, then multiply by the mask so masked keys "
        "and empty rows are exactly 0",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after",
        nan_to_num_after,
        "correct",
        "-inf fill and softmax, then nan_to_num(nan=0) to turn the empty rows' NaN into "
        "zeros (the masked scores get no gradient, so none is NaN)",
    ),
]
