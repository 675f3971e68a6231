"""Blind set B34, check_top_p (chapter 18): nucleus filters as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _unsort(keep_sorted: Tensor, order: Tensor) -> Tensor:
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_less_equal(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs <= p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_empty_row(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p  # the tokens that fit inside p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    n = ((sorted_probs.cumsum(-1) - sorted_probs) < p).sum(-1, keepdim=True)
    threshold = sorted_probs.gather(-1, n - 1)  # the smallest probability still needed
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits * _unsort(keep, order)  # zero the others


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    all_probs = logits.softmax(-1)
    probs, order = all_probs.sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    filtered = all_probs * _unsort(keep, order)
    return filtered / filtered.sum(-1, keepdim=True)


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))


def top_p_rows_mixed(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)
    probs, order = flat.softmax(-1).sort(descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    logits[~_unsort(keep, order)] = float("-inf")
    return logits


def top_p_gather_not_scatter(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = keep.gather(-1, order)  # back to the vocabulary's order
    return logits.masked_fill(~kept, float("-inf"))


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.softmax(logits, dim=0).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_scatter(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    mass_before = torch.cumsum(probs, dim=-1) - probs
    remove_sorted = mass_before >= p
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, -torch.inf)


def top_p_inverse_permutation(logits: Tensor, p: float) -> Tensor:
    """Undo the sort with the inverse permutation (argsort of the order) and torch.where."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    kept = keep_sorted.gather(-1, order.argsort(-1))
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs, order = flat[r].softmax(0).sort(descending=True)
        total = 0.0
        for rank, (prob, i) in enumerate(zip(probs.tolist(), order.tolist())):
            total += prob
            if rank > 0 and total - prob >= p:  # the tokens before it already hold p
                break
            out[r, i] = flat[r, i]
    return out.view_as(logits)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept tokens while the cumulative sum including them is below p",
    ),
    BlindCase(
        CHECK, "less_equal", top_p_less_equal, "mistake", "I used <= p on the mass before the token"
    ),
    BlindCase(
        CHECK,
        "empty_row",
        top_p_empty_row,
        "mistake",
        "I kept the tokens whose cumulative sum is <= p, nothing more",
    ),
    BlindCase(
        CHECK,
        "threshold",
        top_p_threshold,
        "mistake",
        "I found the smallest probability needed and kept every token at least that likely",
    ),
    BlindCase(
        CHECK, "ascending", top_p_ascending, "mistake", "I forgot descending=True in the sort"
    ),
    BlindCase(
        CHECK,
        "zero_fill",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the mask, so the others become 0",
    ),
    BlindCase(
        CHECK,
        "returns_probs",
        top_p_returns_probs,
        "mistake",
        "I returned the renormalised probabilities of the nucleus",
    ),
    BlindCase(
        CHECK,
        "sorted_output",
        top_p_sorted_output,
        "mistake",
        "I returned the sorted logits with the tail set to -inf",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_on_unsorted,
        "mistake",
        "I applied the mask from the sorted order straight to the logits",
    ),
    BlindCase(
        CHECK, "rows_mixed", top_p_rows_mixed, "mistake", "I flattened the logits before sorting"
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I set the removed logits to -inf in the tensor I was given",
    ),
    BlindCase(
        CHECK,
        "gather_not_scatter",
        top_p_gather_not_scatter,
        "mistake",
        "I used gather with the sort order to undo the sort",
    ),
    BlindCase(
        CHECK, "softmax_dim0", top_p_softmax_dim0, "mistake", "I wrote softmax(logits, dim=0)"
    ),
    BlindCase(
        CHECK,
        "scatter",
        top_p_scatter,
        "correct",
        "I sort the logits, build a remove mask and scatter it back",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation",
        top_p_inverse_permutation,
        "correct",
        "I undo the sort with gather on argsort(order) and use torch.where",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        top_p_row_loop,
        "correct",
        "a Python loop per row adding tokens until the total reaches p",
    ),
]
