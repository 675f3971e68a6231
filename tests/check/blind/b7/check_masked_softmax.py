"""Blind set B7, check_masked_softmax (chapter 6): softmax over the keys, masked keys weight 0."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_no_empty_row_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=-1)  # a row with no visible key is 0/0


def ms_multiply_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights * mask  # zero the masked keys' weights
    return weights


def ms_renormalize_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = scores.softmax(dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / (weights.sum(dim=-1, keepdim=True) + 1e-12)  # renormalize, no 0/0


def ms_zero_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # masked scores become 0
    return scores.softmax(dim=-1)


def ms_fill_where_true(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    has_key = (~mask).any(dim=-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_assumes_key_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    mask = mask[:, None, :]  # (B, T_k) -> (B, 1, T_k) so it covers every query
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_mask_not_optional(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(dim=-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(dim=-1)
    return weights.masked_fill(~has_key, 0.0)


def ms_fill_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    scores.masked_fill_(~mask, float("-inf")).masked_fill_(~has_key, 0.0)  # no copies
    return scores.softmax(dim=-1).masked_fill(~has_key, 0.0)


def ms_softmax_dim_one(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return F.softmax(scores, dim=1).masked_fill(~has_key, 0.0)
    return F.softmax(scores, dim=1)  # dim=1: the columns, i.e. the keys


def ms_finfo_min_fill(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)  # no -inf, no NaN
    return scores.softmax(dim=-1)


def ms_any_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    has_key = mask.any(dim=-2, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(dim=-1).masked_fill(~has_key, 0.0)


def ms_softmax_in_float32(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        has_key = mask.any(dim=-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return torch.softmax(scores, dim=-1, dtype=torch.float32).masked_fill(~has_key, 0.0)
    return torch.softmax(scores, dim=-1, dtype=torch.float32)  # softmax in full precision


# ---------------------------------------------------------------- correct variants


def ms_where_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    return torch.where(has_key, weights, torch.zeros_like(weights))  # replace the NaN rows


def ms_log_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, -1)
    bias = torch.log(mask.to(scores.dtype))  # log 1 = 0, log 0 = -inf
    has_key = mask.any(-1, keepdim=True)
    logits = torch.where(has_key, scores + bias, torch.zeros_like(scores))
    return torch.where(has_key, torch.softmax(logits, -1), torch.zeros_like(scores))


def ms_exp_by_hand(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    visible = scores.masked_fill(~mask, float("-inf"))
    top = visible.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top)).detach()
    e = torch.exp(scores.masked_fill(~mask, 0.0) - top) * mask  # 0 at the masked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_float64_inside(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    dtype = scores.dtype
    s = scores.double()
    if mask is not None:
        empty = ~mask.any(dim=-1, keepdim=True)
        s = s.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
        return s.softmax(dim=-1).masked_fill(empty, 0.0).to(dtype)
    return s.softmax(dim=-1).to(dtype)


def ms_safe_mask_then_zero(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return F.softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    safe = mask | ~has_key  # a row with no key sees all keys (finite), then is zeroed
    weights = F.softmax(scores.masked_fill(~safe, float("-inf")), dim=-1)
    return weights * has_key


CASES = [
    BlindCase(
        check=CHECK,
        name="no_guard_for_empty_rows",
        code=ms_no_empty_row_guard,
        kind="mistake",
        what="I filled the masked scores with -inf and took the softmax, with nothing for a row "
        "in which every key is masked (it comes out NaN).",
    ),
    BlindCase(
        check=CHECK,
        name="softmax_dtype_float32",
        code=ms_softmax_in_float32,
        kind="mistake",
        what="I called torch.softmax(..., dtype=torch.float32) 'for precision', so float64 "
        "scores come back as float32 weights.",
    ),
    BlindCase(
        check=CHECK,
        name="multiply_weights_by_mask",
        code=ms_multiply_after_softmax,
        kind="mistake",
        what="I took the softmax of all scores and multiplied the weights by the mask, so the "
        "remaining weights no longer sum to 1.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_after_softmax_renormalized",
        code=ms_renormalize_after,
        kind="mistake",
        what="I masked after the softmax and renormalized with a small epsilon; when a masked "
        "key has a much larger score, the visible keys underflow to 0 and the row is lost.",
    ),
    BlindCase(
        check=CHECK,
        name="masked_scores_zero",
        code=ms_zero_scores,
        kind="mistake",
        what="I multiplied the scores by the mask, so masked keys get score 0 (weight e^0 = 1), "
        "not -inf.",
    ),
    BlindCase(
        check=CHECK,
        name="fill_where_mask_true",
        code=ms_fill_where_true,
        kind="mistake",
        what="I filled -inf where the mask is True (as in nn.MultiheadAttention), the opposite "
        "of the book's True = may attend.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_always_unsqueezed",
        code=ms_assumes_key_mask,
        kind="mistake",
        what="I assumed the mask is (B, T_k) and always did mask[:, None, :], which breaks a "
        "mask that already has the query axis.",
    ),
    BlindCase(
        check=CHECK,
        name="mask_none_not_handled",
        code=ms_mask_not_optional,
        kind="mistake",
        what="I forgot that mask may be None: ~None raises a TypeError.",
    ),
    BlindCase(
        check=CHECK,
        name="masked_fill_in_place",
        code=ms_fill_in_place,
        kind="mistake",
        what="I used masked_fill_ (in place) on the scores to avoid copies, which overwrites "
        "the caller's tensor and fails on a leaf that requires grad.",
    ),
    BlindCase(
        check=CHECK,
        name="softmax_dim_1",
        code=ms_softmax_dim_one,
        kind="mistake",
        what="I wrote F.softmax(scores, dim=1) thinking of a (T_q, T_k) matrix; for batched "
        "scores (B, T_q, T_k) dim=1 is the queries.",
    ),
    BlindCase(
        check=CHECK,
        name="finfo_min_fill",
        code=ms_finfo_min_fill,
        kind="mistake",
        what="I filled masked scores with torch.finfo(dtype).min instead of -inf, so a row with "
        "no visible key gets uniform weights instead of zeros.",
    ),
    BlindCase(
        check=CHECK,
        name="has_key_over_queries",
        code=ms_any_over_queries,
        kind="mistake",
        what="I computed 'does this row have a key' with mask.any(dim=-2) instead of dim=-1.",
    ),
    BlindCase(
        check=CHECK,
        name="nan_rows_replaced_with_where",
        code=ms_where_after_softmax,
        kind="correct",
        what="I let a row with no visible key become NaN and replaced it by zeros with "
        "torch.where after the softmax (masked_fill's backward already gives that row a zero "
        "gradient).",
    ),
    BlindCase(
        check=CHECK,
        name="log_of_mask_added",
        code=ms_log_mask,
        kind="correct",
        what="I added log(mask) (0 or -inf) to the scores and guarded the empty rows with "
        "torch.where before and after the softmax.",
    ),
    BlindCase(
        check=CHECK,
        name="exp_by_hand",
        code=ms_exp_by_hand,
        kind="correct",
        what="I wrote the softmax by hand: exp of the scores minus the visible maximum, times "
        "the mask, divided by a sum that is replaced by 1 where it is 0.",
    ),
    BlindCase(
        check=CHECK,
        name="float64_inside",
        code=ms_float64_inside,
        kind="correct",
        what="I computed the masked softmax in float64 and cast the weights back.",
    ),
    BlindCase(
        check=CHECK,
        name="safe_mask_then_zero",
        code=ms_safe_mask_then_zero,
        kind="correct",
        what="I let a row with no visible key see every key (finite scores), then multiplied "
        "its weights by 0.",
    ),
]
