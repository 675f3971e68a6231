"""Blind set B10, check_masked_softmax (chapter 6): the softmax that gives masked keys weight 0,
as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_masked_softmax"


# ---------------------------------------------------------------- mistakes


def ms_true_blocks(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores = scores.masked_fill(mask, float("-inf"))  # fill where the mask is set
    empty = torch.isneginf(scores).all(-1, keepdim=True)
    return scores.masked_fill(empty, 0.0).softmax(-1).masked_fill(empty, 0.0)


def ms_minus_1e9(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # large negative, no NaN possible
    return torch.softmax(scores, dim=-1)


def ms_no_guard(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def ms_over_queries(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-2)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.nan_to_num(torch.softmax(scores, dim=-2))


def ms_zero_after_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # masked keys get weight 0
    return weights


def ms_additive_then_nan_to_num(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    additive = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores + additive, dim=-1)  # the notes' 0 / -inf matrix, added
    return torch.nan_to_num(weights, nan=0.0)  # rows with no key: 0/0 -> 0


def ms_mask_added(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores + mask  # the additive mask of the notes
    return F.softmax(scores, dim=-1)


def ms_multiplies_scores(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores * mask  # zero the scores of the padding
    return F.softmax(scores, dim=-1)


def ms_query_axis_added(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    mask = mask.unsqueeze(-2)  # (B, T_k) -> (B, 1, T_k): the same keys for every query
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(dim=-1).masked_fill(~has_key, 0.0)


def ms_fills_in_place(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    scores.masked_fill_(~mask, float("-inf"))  # no copy of the scores
    has_key = mask.any(-1, keepdim=True)
    scores.masked_fill_(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def ms_if_mask(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask:  # a mask was given
        has_key = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
        return scores.softmax(-1).masked_fill(~has_key, 0.0)
    return scores.softmax(-1)


def ms_uniform_empty_rows(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return scores.softmax(-1)
    has_key = mask.any(-1, keepdim=True)
    mask = mask | ~has_key  # a query with no key looks at every key instead of none
    return scores.masked_fill(~mask, float("-inf")).softmax(-1)


# ---------------------------------------------------------------- correct variants


def ms_nan_to_num_after(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)  # rows with no key: 0/0 -> 0


def ms_where(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    if mask is None:
        return F.softmax(scores, dim=-1)
    neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
    hidden = torch.where(mask, scores, neg_inf)
    any_key = mask.any(dim=-1, keepdim=True)
    safe = torch.where(any_key, hidden, torch.zeros_like(hidden))
    return torch.where(any_key, F.softmax(safe, dim=-1), torch.zeros_like(safe))


def ms_by_hand(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """exp(s - max) over the visible keys, divided by its sum; 0 where the sum is 0."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    hidden = scores.masked_fill(~mask, float("-inf"))
    shift = hidden.amax(dim=-1, keepdim=True)
    shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift)).detach()
    e = torch.exp(hidden - shift)  # exactly 0 at the masked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def ms_log_softmax(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """log_softmax then exp; an extra optional dim argument (the keys by default)."""
    if mask is None:
        return scores.log_softmax(dim).exp()
    visible = mask.any(dim, keepdim=True)
    filled = scores.masked_fill(~mask, float("-inf"))
    filled = filled.masked_fill_(~visible, 0.0)  # in place, on my own copy
    weights = filled.log_softmax(dim).exp()
    return weights * visible


CASES = [
    BlindCase(
        CHECK,
        "mask_true_blocks",
        ms_true_blocks,
        "mistake",
        "I filled -inf where the mask is True, as for nn.MultiheadAttention's masks.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        ms_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9 to avoid NaN, so a row with no visible key is "
        "uniform over the padding instead of zeros.",
    ),
    BlindCase(
        CHECK,
        "no_empty_row_guard",
        ms_no_guard,
        "mistake",
        "I filled -inf and took the softmax, with nothing for a row that has no visible key "
        "(it comes out NaN).",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        ms_over_queries,
        "mistake",
        "I took the softmax over dim=-2.",
    ),
    BlindCase(
        CHECK,
        "zeroed_after_softmax",
        ms_zero_after_softmax,
        "mistake",
        "I multiplied the softmax by the mask afterwards, so the visible weights no longer sum "
        "to 1.",
    ),
    BlindCase(
        CHECK,
        "additive_mask_then_nan_to_num",
        ms_additive_then_nan_to_num,
        "mistake",
        "I added a 0 / -inf matrix to the scores, as the notes do, and turned the NaN of a row "
        "with no visible key into 0 after the softmax; the values are right but that row's "
        "gradient is NaN.",
    ),
    BlindCase(
        CHECK,
        "mask_added_to_scores",
        ms_mask_added,
        "mistake",
        "I added the boolean mask to the scores, like the notes' additive mask, so visible keys "
        "get +1 instead of masked keys getting -inf.",
    ),
    BlindCase(
        CHECK,
        "scores_times_mask",
        ms_multiplies_scores,
        "mistake",
        "I multiplied the scores by the mask, which gives masked keys a score of 0, not a "
        "weight of 0.",
    ),
    BlindCase(
        CHECK,
        "query_axis_added",
        ms_query_axis_added,
        "mistake",
        "I did mask.unsqueeze(-2) to add the query axis, which breaks masks that already "
        "broadcast, like (T_q, T_k) or (B, 1, T_k).",
    ),
    BlindCase(
        CHECK,
        "fills_scores_in_place",
        ms_fills_in_place,
        "mistake",
        "I used masked_fill_ on the scores passed in, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "if_mask_truthiness",
        ms_if_mask,
        "mistake",
        "I wrote `if mask:` instead of `if mask is not None:`.",
    ),
    BlindCase(
        CHECK,
        "uniform_for_empty_rows",
        ms_uniform_empty_rows,
        "mistake",
        "For a row with no visible key I let it see every key, so it gets a plain softmax "
        "instead of zeros.",
    ),
    BlindCase(
        CHECK,
        "masked_fill_then_nan_to_num",
        ms_nan_to_num_after,
        "correct",
        "-inf by masked_fill, then nan_to_num(0) after the softmax for rows with no visible key "
        "(masked_fill's backward gives those rows a zero gradient, not NaN).",
    ),
    BlindCase(
        CHECK,
        "torch_where",
        ms_where,
        "correct",
        "torch.where everywhere instead of masked_fill.",
    ),
    BlindCase(
        CHECK,
        "by_hand_exp_sum",
        ms_by_hand,
        "correct",
        "exp(s - max) of the -inf-filled scores over its sum, the max taken over the visible "
        "keys; a zero sum is replaced by 1.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_with_dim",
        ms_log_softmax,
        "correct",
        "log_softmax then exp, in-place fill on a copy, and an extra dim argument (-1 by default).",
    ),
]
