"""Blind set B19, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p  # the mass up to and including the token
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_less_equal(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before <= p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_can_be_empty(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    remove_sorted = probs.cumsum(dim=-1) > p
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # forgot descending=True
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_fill_zero(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * kept  # zero the rest


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    keep_sorted = sorted_probs.cumsum(-1) - sorted_probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    filtered = probs.masked_fill(~kept, 0.0)
    return filtered / filtered.sum(-1, keepdim=True)  # renormalized nucleus


def top_p_sorted_order(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))  # never put back in place


def top_p_sorted_mask_on_logits(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # mask still in sorted order


def top_p_gather_instead_of_scatter(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = keep_sorted.gather(-1, order)  # back to the vocabulary's order (the wrong way round)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_flat_batch(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)
    probs, order = flat.softmax(0).sort(descending=True)  # all rows in one sort
    keep_sorted = probs.cumsum(0) - probs < p
    keep_sorted[0] = True
    kept = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~kept] = float("-inf")  # in place, saves memory
    return logits


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(0).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_argsort_inverse(logits: Tensor, p: float) -> Tensor:
    order = logits.argsort(dim=-1, descending=True)
    probs = logits.softmax(-1).gather(-1, order)
    mass_before = probs.cumsum(-1) - probs
    keep_sorted = mass_before < p
    inverse = order.argsort(dim=-1)  # where each token went in the sorted order
    kept = keep_sorted.gather(-1, inverse)
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    out = logits.clone()
    rows = out.view(-1, out.shape[-1])
    for row in rows:
        probs, order = row.softmax(0).sort(descending=True)
        before = probs.cumsum(0) - probs  # the mass of the more likely tokens
        for mass, idx in zip(before.tolist(), order.tolist()):
            if mass >= p:
                row[idx] = float("-inf")  # writes into out, our own copy
    return out


def top_p_scatter_sorted_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    probs = logits.softmax(-1).gather(-1, order)  # the same order as the sorted logits
    remove = probs.cumsum(-1) - probs >= p
    sorted_logits[remove] = float("-inf")  # our own sorted copy
    return torch.empty_like(logits).scatter_(-1, order, sorted_logits)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum (with the token) is below p, which drops "
        "the token that crosses p.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        top_p_less_equal,
        "mistake",
        "I kept a token when the mass before it is <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "row_can_be_empty",
        top_p_can_be_empty,
        "mistake",
        "I removed the tokens whose cumulative sum exceeds p, without always keeping the "
        "most likely token.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least "
        "that likely.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted without descending=True, so the least likely tokens are kept.",
    ),
    BlindCase(
        CHECK,
        "fill_zero",
        top_p_fill_zero,
        "mistake",
        "I multiplied the logits by the keep mask, so the others get 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the renormalized probabilities of the nucleus instead of logits.",
    ),
    BlindCase(
        CHECK,
        "left_sorted",
        top_p_sorted_order,
        "mistake",
        "I filtered the sorted logits and returned them without putting them back in the "
        "vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_on_logits,
        "mistake",
        "I applied the mask computed in sorted order directly to the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_instead_of_scatter,
        "mistake",
        "I un-sorted the mask with gather(-1, order), which applies the permutation "
        "instead of its inverse.",
    ),
    BlindCase(
        CHECK,
        "batch_flattened",
        top_p_flat_batch,
        "mistake",
        "I flattened the batch and took one softmax and sort over all rows together.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I wrote -inf into the caller's logits in place and returned them.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        top_p_softmax_dim0,
        "mistake",
        "I took the softmax over dim 0 instead of the vocabulary axis.",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse_permutation",
        top_p_argsort_inverse,
        "correct",
        "argsort, gather of the probabilities, and the inverse permutation order.argsort() "
        "with gather to un-sort; torch.where for the fill.",
    ),
    BlindCase(
        CHECK,
        "python_loop_per_row",
        top_p_row_loop,
        "correct",
        "A Python loop over the rows of a clone, summing the mass token by token.",
    ),
    BlindCase(
        CHECK,
        "scatter_sorted_logits",
        top_p_scatter_sorted_logits,
        "correct",
        "Sorts the logits themselves, writes -inf into the sorted copy where the mass "
        "before reaches p, and scatters the row back into place.",
    ),
]
