"""Blind set B23, check_masked_softmax (chapter 6): the softmax that zeroes masked keys, by readers."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"

NEG_INF = float("-inf")


# ---------------------------------------------------------------- mistakes


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, NEG_INF).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-2).masked_fill(~mask, 0.0)  # one column per key


def ms_true_blocks(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    blocked = mask.all(dim=-1, keepdim=True)
    scores = scores.masked_fill(mask, NEG_INF).masked_fill(blocked, 0.0)  # True = hide
    return scores.softmax(-1).masked_fill(blocked, 0.0)


def ms_big_negative(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # a large negative number, no NaN
    return torch.softmax(scores, dim=-1)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_scales_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores / scores.shape[-1] ** 0.5  # the usual 1/sqrt(d) before a softmax
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, NEG_INF).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_multiply_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores * mask, dim=-1) * mask  # zero the masked scores and weights


def ms_fill_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)  # masked scores set to 0
    return weights * has_key


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # masked keys get weight 0
    return weights


def ms_adds_query_axis(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.unsqueeze(-2)  # (B, T_k) -> (B, 1, T_k): the same for every query
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, NEG_INF).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_guard_wrong_axis(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-2, keepdim=True)  # does the row see anything?
    scores = scores.masked_fill(~mask, NEG_INF).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_additive_bool(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores + mask, dim=-1)  # an attention mask is added to the scores


def ms_fills_input_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, NEG_INF)  # no copy of the scores
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_hardcoded_dim1(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~mask, NEG_INF).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=1).masked_fill(~mask | ~has_key, 0.0)  # dim 1: the keys


# ---------------------------------------------------------------- correct variants


def ms_where_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    visible = mask.expand_as(scores)
    any_visible = visible.any(dim=-1, keepdim=True)
    filled = torch.where(visible, scores, torch.full_like(scores, NEG_INF))
    filled = torch.where(any_visible, filled, torch.zeros_like(scores))
    return torch.where(any_visible, filled.softmax(dim=-1), torch.zeros_like(scores))


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    s = scores.masked_fill(~mask, NEG_INF)
    m = s.amax(dim=-1, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # an empty row: nothing to shift
    e = torch.exp(s - m)  # exactly 0 at masked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)


def ms_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, NEG_INF)
    return torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # an empty row gives 0/0


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.log_softmax(scores, dim=-1).exp()
    empty = ~mask.any(dim=-1, keepdim=True)
    s = scores.masked_fill(~mask, NEG_INF).masked_fill(empty, 0.0)
    return torch.log_softmax(s, dim=-1).exp() * ~empty


CASES = [
    BlindCase(CHECK, "over_queries", ms_over_queries, "mistake", "I took the softmax over dim=-2"),
    BlindCase(
        CHECK,
        "true_blocks",
        ms_true_blocks,
        "mistake",
        "I read True as 'blocked', as nn.MultiheadAttention does",
    ),
    BlindCase(
        CHECK,
        "big_negative",
        ms_big_negative,
        "mistake",
        "I filled the masked scores with -1e9 instead of -inf and added no guard",
    ),
    BlindCase(
        CHECK,
        "no_guard",
        ms_no_guard,
        "mistake",
        "I filled with -inf and took the softmax; an empty row gives NaN",
    ),
    BlindCase(
        CHECK,
        "scales_inside",
        ms_scales_inside,
        "mistake",
        "I divided the scores by sqrt of their last size before the softmax",
    ),
    BlindCase(
        CHECK,
        "multiply_scores",
        ms_multiply_scores,
        "mistake",
        "I multiplied the scores by the mask before the softmax and the weights after",
    ),
    BlindCase(
        CHECK, "fill_zero", ms_fill_zero, "mistake", "I set the masked scores to 0 instead of -inf"
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I zeroed the masked weights after the softmax, without renormalizing",
    ),
    BlindCase(
        CHECK,
        "adds_query_axis",
        ms_adds_query_axis,
        "mistake",
        "I unsqueezed the mask at -2 to give it a query axis",
    ),
    BlindCase(
        CHECK,
        "guard_wrong_axis",
        ms_guard_wrong_axis,
        "mistake",
        "I looked for rows without a visible key with any(dim=-2)",
    ),
    BlindCase(
        CHECK,
        "additive_bool",
        ms_additive_bool,
        "mistake",
        "I added the mask to the scores, like a float attention mask",
    ),
    BlindCase(
        CHECK,
        "fills_input_in_place",
        ms_fills_input_in_place,
        "mistake",
        "I used masked_fill_ on the scores I was given",
    ),
    BlindCase(
        CHECK,
        "hardcoded_dim1",
        ms_hardcoded_dim1,
        "mistake",
        "I wrote softmax(dim=1), thinking of (T_q, T_k) scores",
    ),
    BlindCase(
        CHECK,
        "where_guard",
        ms_where_guard,
        "correct",
        "torch.where with the mask expanded to the scores, guard for empty rows",
    ),
    BlindCase(
        CHECK,
        "manual_exp",
        ms_manual_exp,
        "correct",
        "exp(s - max) by hand, masked keys at -inf, an empty row divided by 1",
    ),
    BlindCase(
        CHECK,
        "nan_to_num",
        ms_nan_to_num,
        "correct",
        "-inf fill, softmax, then nan_to_num turns an empty row's NaN into 0",
    ),
    BlindCase(
        CHECK,
        "log_softmax_exp",
        ms_log_softmax,
        "correct",
        "log_softmax then exp, empty rows given finite scores and multiplied by 0",
    ),
]
