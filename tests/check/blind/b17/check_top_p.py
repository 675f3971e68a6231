"""Blind set B17, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) <= p  # the mass up to and including the token
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_le_before(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before <= p  # <= so that p itself is reached
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_cumsum_with_token_first_forced(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p
    keep_sorted[..., 0] = True  # the most likely token always stays
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1)  # sorted, smallest first
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * keep  # zero out the others


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep_sorted = sorted_probs.cumsum(-1) - sorted_probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return probs.masked_fill(~keep, 0.0)  # the filtered distribution, ready to sample


def top_p_sorted_order(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))  # never put back in place


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # mask of the sorted order on the logits


def top_p_flattened(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)  # one list of scores
    probs, order = flat.softmax(-1).sort(descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p * logits[..., 0].numel()  # p per row
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return flat.masked_fill(~keep, float("-inf")).view_as(logits)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    remove_sorted = probs.cumsum(-1) - probs >= p
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    logits[remove] = float("-inf")  # straight into the logits
    return logits


def top_p_scatter_instead_of_gather(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = keep_sorted.gather(-1, order)  # back to the vocabulary's order, I thought
    return logits.masked_fill(~keep, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_argsort_gather(logits: Tensor, p: float) -> Tensor:
    """argsort, then the inverse permutation (argsort of the order) with gather; torch.where."""
    order = logits.argsort(dim=-1, descending=True)
    probs = logits.softmax(dim=-1).gather(-1, order)
    before = probs.cumsum(dim=-1) - probs
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    keep = keep_sorted.gather(-1, order.argsort(dim=-1))
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_rows_loop(logits: Tensor, p: float) -> Tensor:
    """Row by row in Python over a (N, V) view; a clone of the input is filled."""
    out = logits.clone()
    flat = out.reshape(-1, logits.shape[-1])
    for row in flat:
        probs = torch.softmax(row, dim=0)
        order = torch.argsort(probs, descending=True)
        mass = 0.0
        keep = torch.zeros_like(row, dtype=torch.bool)
        for i in order.tolist():
            if mass >= p:
                break
            keep[i] = True
            mass = mass + float(probs[i])
        row.masked_fill_(~keep, float("-inf"))
    return flat.view_as(logits)


def top_p_exclusive_cumsum(logits: Tensor, p: float) -> Tensor:
    """The mass before each token as an exclusive cumsum (a zero prepended), and the removed
    tokens scattered back as a mask of their own."""
    probs, idx = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    csum = probs.cumsum(dim=-1)
    before = torch.cat([torch.zeros_like(csum[..., :1]), csum[..., :-1]], dim=-1)
    remove_sorted = before >= p
    remove = torch.zeros_like(remove_sorted).scatter(-1, idx, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum, the token included, is <= p, so the token "
        "that crosses p is dropped (and the row can be empty).",
    ),
    BlindCase(
        CHECK,
        "le_instead_of_lt",
        top_p_le_before,
        "mistake",
        "I tested the mass before each token with <= p instead of < p, which keeps one token "
        "too many when the more likely ones hold exactly p.",
    ),
    BlindCase(
        CHECK,
        "cumsum_with_token_first_kept",
        top_p_cumsum_with_token_first_forced,
        "mistake",
        "I tested the cumulative sum with the token (< p) and forced the first token in, so "
        "the row is never empty but the token crossing p is still lost.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that "
        "likely, so all tokens tied with it stay.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted without descending=True, so the least likely tokens are accumulated and kept.",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the keep mask, giving 0 instead of -inf outside the nucleus.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the probabilities with zeros outside the nucleus, not the logits.",
    ),
    BlindCase(
        CHECK,
        "left_in_sorted_order",
        top_p_sorted_order,
        "mistake",
        "I filtered the sorted logits and returned them sorted, never put back in the "
        "vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I computed the keep mask in sorted order and applied it to the original logits "
        "without scattering it back.",
    ),
    BlindCase(
        CHECK,
        "rows_flattened",
        top_p_flattened,
        "mistake",
        "I flattened the batch into one list and applied p times the number of rows to it, so "
        "the rows are mixed.",
    ),
    BlindCase(
        CHECK,
        "logits_changed_in_place",
        top_p_in_place,
        "mistake",
        "I wrote -inf into the caller's logits (logits[remove] = -inf) and returned them.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_scatter_instead_of_gather,
        "mistake",
        "I took the sorted mask back to the vocabulary's order with gather(order) instead of "
        "scatter (the inverse permutation).",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse_gather",
        top_p_argsort_gather,
        "correct",
        "argsort of the logits, the inverse permutation via argsort(order) and gather; "
        "torch.where for the fill.",
    ),
    BlindCase(
        CHECK,
        "python_row_loop",
        top_p_rows_loop,
        "correct",
        "A Python loop over the rows of a clone, adding tokens while the mass so far is < p.",
    ),
    BlindCase(
        CHECK,
        "exclusive_cumsum",
        top_p_exclusive_cumsum,
        "correct",
        "The mass before each token as an exclusive cumsum (zero prepended); a remove mask "
        "scattered back.",
    ),
]
