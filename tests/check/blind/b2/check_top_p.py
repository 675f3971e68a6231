"""Blind cases for check_top_p (chapter 18), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _sorted(logits):
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    return probs, order


def _unsort(keep_sorted, order):
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---- mistakes -------------------------------------------------------------------------------


def crossing_token_dropped(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) <= p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def one_too_many_at_exact_p(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) - probs <= p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def empty_row_possible(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) < p  # no special case for the first token
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    needed = ((sorted_probs.cumsum(-1) - sorted_probs) < p).sum(-1, keepdim=True)  # how many
    threshold = sorted_probs.gather(-1, needed - 1)
    return logits.masked_fill(probs < threshold, float("-inf"))


def ascending_sort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1)  # forgot descending=True
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def zero_outside(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~_unsort(keep, order), 0.0)


def probabilities_returned(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) - probs < p
    return logits.softmax(-1) * _unsort(keep, order)


def left_in_sorted_order(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def sorted_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = _sorted(logits)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))


def batch_as_one_distribution(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)
    probs, order = flat.softmax(0).sort(descending=True)
    keep = probs.cumsum(0) - probs < p
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def changed_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) - probs < p
    logits[~_unsort(keep, order)] = float("-inf")
    return logits


def softmax_over_first_axis(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=0).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


# ---- reader's slip ------------------------------------------------------------------------------


def returns_logits_and_mask(logits: Tensor, p: float) -> tuple[Tensor, Tensor]:
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) - probs < p
    kept = _unsort(keep, order)
    return logits.masked_fill(~kept, float("-inf")), kept


# ---- correct variants ---------------------------------------------------------------------------


def exclusive_cumsum_argsort(logits: Tensor, p: float) -> Tensor:
    probs = torch.softmax(logits, dim=-1)
    order = torch.argsort(probs, dim=-1, descending=True)
    sorted_probs = probs.gather(-1, order)
    before = sorted_probs.cumsum(-1) - sorted_probs
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    inverse = torch.argsort(order, dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def row_by_row(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        values, idx = flat[r].softmax(0).sort(descending=True)
        before = (values.cumsum(0) - values).tolist()  # mass of the more likely tokens
        for i, j in enumerate(idx.tolist()):
            if i > 0 and before[i] >= p:
                break
            out[r, j] = flat[r, j]
    return out.view_as(logits)


def scatter_into_sorted_space(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    mass_before = probs.cumsum(dim=-1) - probs
    drop_sorted = mass_before >= p
    drop_sorted[..., :1] = False
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, -torch.inf)


CASES = [
    BlindCase(
        CHECK,
        "crossing_token_dropped",
        crossing_token_dropped,
        "mistake",
        "I kept the tokens whose cumulative sum including themselves is <= p, which drops the token that crosses p",
    ),
    BlindCase(
        CHECK,
        "one_too_many_at_exact_p",
        one_too_many_at_exact_p,
        "mistake",
        "I kept a token when the mass before it is <= p instead of < p",
    ),
    BlindCase(
        CHECK,
        "empty_row_possible",
        empty_row_possible,
        "mistake",
        "I kept the tokens with cumulative sum < p and did not always keep the most likely one",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        probability_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that likely",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        ascending_sort,
        "mistake",
        "I sorted without descending=True, so the least likely tokens are kept",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        zero_outside,
        "mistake",
        "I set the logits outside the nucleus to 0 instead of -inf",
    ),
    BlindCase(
        CHECK,
        "probabilities_returned",
        probabilities_returned,
        "mistake",
        "I returned the probabilities multiplied by the mask instead of the filtered logits",
    ),
    BlindCase(
        CHECK,
        "left_in_sorted_order",
        left_in_sorted_order,
        "mistake",
        "I filtered the sorted logits and returned them still sorted",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        sorted_mask_on_unsorted,
        "mistake",
        "I laid the mask computed in sorted order directly on the unsorted logits",
    ),
    BlindCase(
        CHECK,
        "batch_as_one_distribution",
        batch_as_one_distribution,
        "mistake",
        "I flattened the whole batch into one vector before the softmax and the sort",
    ),
    BlindCase(
        CHECK,
        "changed_in_place",
        changed_in_place,
        "mistake",
        "I wrote -inf into the logits tensor I was given and returned it",
    ),
    BlindCase(
        CHECK,
        "softmax_over_first_axis",
        softmax_over_first_axis,
        "mistake",
        "I took the softmax over dim 0, which is the batch axis for a batch of rows",
    ),
    BlindCase(
        CHECK,
        "returns_logits_and_mask",
        returns_logits_and_mask,
        "mistake",
        "I returned the pair (filtered logits, kept mask) instead of the logits alone",
    ),
    BlindCase(
        CHECK,
        "exclusive_cumsum_argsort",
        exclusive_cumsum_argsort,
        "correct",
        "I used argsort, gathered the sorted probabilities, and mapped the mask back with the inverse permutation",
    ),
    BlindCase(
        CHECK,
        "row_by_row",
        row_by_row,
        "correct",
        "I looped over the rows and added tokens in decreasing probability until the mass before the next reached p",
    ),
    BlindCase(
        CHECK,
        "scatter_into_sorted_space",
        scatter_into_sorted_space,
        "correct",
        "I sorted the logits themselves, took the softmax of the sorted logits, and scattered a drop mask back",
    ),
]
