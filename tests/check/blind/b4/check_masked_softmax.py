"""Blind cases for check_masked_softmax (chapter 6), written from the chapter's text only."""

from __future__ import annotations

import torch

from .. import BlindCase

CHECK = "check_masked_softmax"


def fill_minus_1e9(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)


def fill_where_true(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores = scores.masked_fill(mask, float("-inf"))
    has_key = (~mask).any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def zero_after_softmax(scores, mask=None):
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    return weights * mask


def fill_with_zero(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)
    return weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)


def add_log_of_mask(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores + torch.log(mask.to(scores.dtype)), dim=-1)  # log 0 = -inf


def renormalize_no_guard(scores, mask=None):
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True)


def softmax_dim_minus_2(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~has_key, 0.0), dim=-2)
    return weights.masked_fill(~has_key, 0.0)


def where_version(scores, mask=None, dim=-1):
    if mask is None:
        return scores.softmax(dim=dim)
    neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype)
    scores = torch.where(mask, scores, neg_inf)
    has_key = mask.any(dim=dim, keepdim=True)
    scores = torch.where(has_key, scores, torch.zeros_like(scores))
    weights = scores.softmax(dim=dim)
    return torch.where(has_key, weights, torch.zeros_like(weights))


def finfo_min_then_zero(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    lowest = torch.finfo(scores.dtype).min
    weights = torch.softmax(scores.masked_fill(~mask, lowest), dim=-1)
    weights = weights * mask  # exactly 0 at masked keys
    return weights * mask.any(dim=-1, keepdim=True)


CASES = [
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9, like many tutorials",
    ),
    BlindCase(
        CHECK,
        "fill_where_true",
        fill_where_true,
        "mistake",
        "I hid the keys where the mask is True",
    ),
    BlindCase(
        CHECK,
        "zero_after_softmax",
        zero_after_softmax,
        "mistake",
        "I took the plain softmax and multiplied the weights by the mask afterwards",
    ),
    BlindCase(
        CHECK,
        "fill_with_zero",
        fill_with_zero,
        "mistake",
        "I set the masked scores to 0 before the softmax, thinking 0 means no weight",
    ),
    BlindCase(
        CHECK,
        "add_log_of_mask",
        add_log_of_mask,
        "mistake",
        "I added log(mask) to the scores (0 for visible keys, -inf for hidden), no other guard",
    ),
    BlindCase(
        CHECK,
        "renormalize_no_guard",
        renormalize_no_guard,
        "mistake",
        "I zeroed the masked weights and divided each row by its new sum",
    ),
    BlindCase(
        CHECK,
        "softmax_dim_minus_2",
        softmax_dim_minus_2,
        "mistake",
        "I wrote the -inf fill and guard right but took the softmax with dim=-2",
    ),
    BlindCase(
        CHECK,
        "where_version",
        where_version,
        "correct",
        "torch.where instead of masked_fill, and an extra dim argument defaulting to -1",
    ),
    BlindCase(
        CHECK,
        "finfo_min_then_zero",
        finfo_min_then_zero,
        "correct",
        "I filled with the dtype's lowest number, then multiplied by the mask and by 'has a key'",
    ),
]
