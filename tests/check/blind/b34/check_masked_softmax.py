"""Blind set B34, check_masked_softmax (chapter 6): the masked softmax as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_softmax_dim0(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(F.softmax(scores, dim=0))  # the first axis


def ms_softmax_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(scores.softmax(dim=-2))


def ms_polarity(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # masked_fill where the mask is
    return torch.nan_to_num(scores.softmax(-1))


def ms_nan_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1)  # a fully masked row can't happen in practice


def ms_big_negative(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return scores.softmax(-1)


def ms_multiply_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = scores.softmax(-1)
    if mask is not None:
        weights = weights * mask  # zero the masked keys
    return weights


def ms_zero_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)  # masked scores to zero
    return scores.softmax(-1)


def ms_where_uniform(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)
    return scores.softmax(-1)  # a fully masked row: uniform, not NaN


def ms_exp_no_max(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    e = scores.exp()
    if mask is not None:
        e = e * mask
    total = e.sum(-1, keepdim=True)
    return e / total.clamp_min(1e-12)  # my own softmax, no max subtracted


def ms_float_mask_added(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask.float()  # additive mask
    return scores.softmax(-1)


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.log_softmax(-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    has = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has, 0.0).log_softmax(-1).masked_fill(~mask, 0.0)


def ms_renorm_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    w = scores.softmax(-1)
    if mask is None:
        return w
    w = w * mask
    return w / w.sum(-1, keepdim=True)  # renormalise; 0/0 on a row with no key


def ms_mask_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))  # saves memory
        has = mask.any(-1, keepdim=True)
        scores.masked_fill_(~has, 0.0)
        return scores.softmax(-1).masked_fill(~has, 0.0)
    return scores.softmax(-1)


# ---------------------------------------------------------------- correct variants


def ms_where_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.expand_as(scores)
    filled = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    any_key = mask.any(dim=-1, keepdim=True)
    filled = torch.where(any_key, filled, torch.zeros_like(filled))
    return torch.where(any_key, torch.softmax(filled, dim=-1), torch.zeros_like(filled))


def ms_manual_stable(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    neg = scores.masked_fill(~mask, float("-inf"))
    top = neg.amax(-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(neg - top) * mask
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_renorm_guarded(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    w = scores.softmax(-1)
    if mask is None:
        return w
    w = w * mask
    total = w.sum(-1, keepdim=True)
    return w / total.clamp_min(torch.finfo(w.dtype).tiny)  # the chapter says this passes


CASES = [
    BlindCase(
        CHECK, "softmax_dim0", ms_softmax_dim0, "mistake", "I called F.softmax(scores, dim=0)"
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_softmax_queries,
        "mistake",
        "I took the softmax over dim=-2",
    ),
    BlindCase(
        CHECK, "fill_where_true", ms_polarity, "mistake", "I filled -inf where the mask is True"
    ),
    BlindCase(
        CHECK,
        "nan_rows",
        ms_nan_rows,
        "mistake",
        "I filled -inf and did nothing about rows with no visible key",
    ),
    BlindCase(
        CHECK,
        "minus_1e9",
        ms_big_negative,
        "mistake",
        "I filled the masked scores with -1e9 like the Annotated Transformer",
    ),
    BlindCase(
        CHECK,
        "zero_after_no_renorm",
        ms_multiply_after,
        "mistake",
        "I took the softmax and multiplied the weights by the mask",
    ),
    BlindCase(
        CHECK,
        "fill_zero",
        ms_zero_fill,
        "mistake",
        "I set the masked scores to 0 before the softmax",
    ),
    BlindCase(
        CHECK,
        "finfo_min_uniform",
        ms_where_uniform,
        "mistake",
        "I filled with finfo.min instead of -inf so empty rows are not NaN",
    ),
    BlindCase(
        CHECK,
        "exp_without_max",
        ms_exp_no_max,
        "mistake",
        "I wrote exp / sum myself without subtracting the max",
    ),
    BlindCase(
        CHECK,
        "additive_bool_mask",
        ms_float_mask_added,
        "mistake",
        "I added the mask to the scores as floats",
    ),
    BlindCase(
        CHECK,
        "log_softmax",
        ms_log_softmax,
        "mistake",
        "I used log_softmax because it is more stable",
    ),
    BlindCase(
        CHECK,
        "renorm_no_guard",
        ms_renorm_no_guard,
        "mistake",
        "I zeroed the masked weights and renormalised, dividing by a sum that can be 0",
    ),
    BlindCase(
        CHECK,
        "in_place_fill",
        ms_mask_in_place,
        "mistake",
        "I used masked_fill_ in place on the scores to save memory",
    ),
    BlindCase(
        CHECK,
        "where_guard",
        ms_where_guard,
        "correct",
        "I used torch.where for the fill and for the empty rows",
    ),
    BlindCase(
        CHECK,
        "manual_stable",
        ms_manual_stable,
        "correct",
        "I wrote a stable softmax by hand with the max of the visible scores",
    ),
    BlindCase(
        CHECK,
        "renorm_guarded",
        ms_renorm_guarded,
        "correct",
        "I renormalised after zeroing the masked weights, guarding the zero sum",
    ),
]
