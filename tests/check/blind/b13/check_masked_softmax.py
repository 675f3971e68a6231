"""Blind set B13, check_masked_softmax (chapter 6): the masked softmax as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_inverted(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    blocked = mask  # True = blocked, as in nn.MultiheadAttention
    has_key = (~blocked).any(-1, keepdim=True)
    scores = scores.masked_fill(blocked, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def ms_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return F.softmax(scores, dim=-1)


def ms_dim_minus_2(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(scores.softmax(dim=-2))


def ms_zero_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # zero the masked keys
    return weights


def ms_multiply_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return torch.softmax(scores, dim=-1)


def ms_plain_minus_inf(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)  # a row with no key: NaN


def ms_additive_bool(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask.to(scores.dtype)  # an additive mask, as in nn.Transformer
    return torch.softmax(scores, dim=-1)


def ms_in_place_on_input(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf"))  # saves a copy
    scores.masked_fill_(~has_key, 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return F.log_softmax(scores, dim=-1)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return F.log_softmax(scores, dim=-1).masked_fill(~has_key, 0.0)


def ms_zero_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    return scores.masked_fill(~mask, 0.0).softmax(-1)  # "masked" = zero score


# ---------------------------------------------------------------- correct variants


def ms_where(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    if mask is None:
        return scores.softmax(dim)
    neg = torch.full_like(scores, float("-inf"))
    visible = mask.expand_as(scores)
    any_key = visible.any(dim, keepdim=True)
    safe = torch.where(visible, scores, neg)
    safe = torch.where(any_key, safe, torch.zeros_like(scores))
    return torch.where(visible & any_key, safe.softmax(dim), torch.zeros_like(scores))


def ms_renormalise(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    total = weights.sum(-1, keepdim=True)
    return weights / torch.where(total > 0, total, torch.ones_like(total))


def ms_manual_exp(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    shift = scores.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True)
    shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift)).detach()
    e = torch.exp(scores - shift) * mask
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


CASES = [
    BlindCase(
        CHECK,
        "inverted_polarity",
        ms_inverted,
        "mistake",
        "I read True as 'blocked', as nn.MultiheadAttention does.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_minus_1e9,
        "mistake",
        "I filled with -1e9, so a row with no visible key spreads over the masked keys.",
    ),
    BlindCase(
        CHECK, "softmax_dim_minus_2", ms_dim_minus_2, "mistake", "I took the softmax over dim=-2."
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        ms_zero_after,
        "mistake",
        "I multiplied the weights by the mask after the softmax, without renormalising.",
    ),
    BlindCase(
        CHECK,
        "multiply_scores_by_mask",
        ms_multiply_scores,
        "mistake",
        "I multiplied the scores by the mask, so masked keys get exp(0), not 0.",
    ),
    BlindCase(
        CHECK,
        "minus_inf_no_guard",
        ms_plain_minus_inf,
        "mistake",
        "I filled with -inf and did nothing else, so a fully masked row is NaN.",
    ),
    BlindCase(
        CHECK,
        "added_bool_mask",
        ms_additive_bool,
        "mistake",
        "I added the mask to the scores as an additive mask.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_scores",
        ms_in_place_on_input,
        "mistake",
        "I used masked_fill_ on the scores I was given, changing the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I used log_softmax, the numerically safer one.",
    ),
    BlindCase(
        CHECK,
        "zero_fill",
        ms_zero_fill,
        "mistake",
        "I filled masked scores with 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "where_with_dim",
        ms_where,
        "correct",
        "torch.where throughout, with an extra dim argument defaulting to -1.",
    ),
    BlindCase(
        CHECK,
        "renormalise_after",
        ms_renormalise,
        "correct",
        "Plain softmax, zero the masked keys, divide by the row sum (1 where it is 0).",
    ),
    BlindCase(
        CHECK,
        "manual_exp",
        ms_manual_exp,
        "correct",
        "exp(scores - max over visible keys) times the mask, divided by its sum.",
    ),
]
