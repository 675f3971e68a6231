"""Blind set B18, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) <= p  # the tokens whose running total stays within p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_cumsum_strict_empty(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before <= p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1)  # sorted
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * kept  # zero out the others


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep_sorted = sorted_probs.cumsum(-1) - sorted_probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    filtered = probs.masked_fill(~kept, 0.0)
    return filtered / filtered.sum(-1, keepdim=True)  # renormalized, ready to sample


def top_p_sorted_order(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # the mask put straight on the logits


def top_p_gather_unsort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = keep_sorted.gather(-1, order)  # back to the vocabulary order
    return logits.masked_fill(~kept, float("-inf"))


def top_p_rows_mixed(logits: Tensor, p: float) -> Tensor:
    V = logits.shape[-1]
    flat = logits.reshape(-1)
    probs, order = (flat.softmax(0) * (flat.numel() // V)).sort(descending=True)
    before = (probs.cumsum(0) - probs) / (flat.numel() // V)
    keep_sorted = before < p
    kept = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    remove_sorted = probs.cumsum(-1) - probs >= p
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    logits[remove] = float("-inf")  # as in the Hugging Face snippet, on the logits themselves
    return logits


def top_p_logit_cumsum(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    before = sorted_logits.cumsum(-1) - sorted_logits  # forgot the softmax
    keep_sorted = before < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_argsort_inverse(logits: Tensor, p: float) -> Tensor:
    """The inverse permutation with argsort and a gather."""
    order = logits.softmax(dim=-1).argsort(dim=-1, descending=True)
    probs = logits.softmax(dim=-1).gather(-1, order)
    exclusive = torch.cumsum(probs, dim=-1) - probs
    keep_sorted = exclusive < p
    keep_sorted[..., :1] = True
    inverse = order.argsort(dim=-1)
    kept = keep_sorted.gather(-1, inverse)
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def top_p_scatter_sorted_logits(logits: Tensor, p: float) -> Tensor:
    """Filters the sorted logits, then scatters them back to their places."""
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    sorted_logits = logits.gather(-1, order)
    mass_before = torch.cumsum(probs, dim=-1).sub(probs)
    sorted_logits = sorted_logits.masked_fill(mass_before >= p, float("-inf"))
    return torch.empty_like(logits).scatter_(-1, order, sorted_logits)


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """One row at a time in Python, adding probabilities until p is reached."""
    out = logits.clone()
    rows = out.view(-1, out.shape[-1])
    for row in rows:
        probs, order = row.softmax(-1).sort(descending=True)
        total = 0.0
        cut = len(order)
        for i, q in enumerate(probs.tolist()):
            if total >= p:
                cut = i
                break
            total += q
        row[order[cut:]] = float("-inf")
    return out


def top_p_count_then_topk(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    """Counts how many tokens the nucleus needs and keeps them with a sort's first places;
    an extra min_keep argument with a default."""
    probs, order = torch.sort(torch.softmax(logits, -1), dim=-1, descending=True)
    n = ((probs.cumsum(-1) - probs) < p).sum(-1, keepdim=True).clamp(min=min_keep)
    place = torch.arange(logits.shape[-1], device=logits.device).expand_as(probs)
    keep_sorted = place < n
    mask = torch.zeros_like(keep_sorted)
    mask.scatter_(-1, order, keep_sorted)
    return logits.masked_fill(mask.logical_not(), -torch.inf)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I keep the sorted tokens whose cumulative sum, the token included, is <= p, so the "
        "token that crosses p is dropped (the first one I force in).",
    ),
    BlindCase(
        CHECK,
        "cumsum_strict_row_empty",
        top_p_cumsum_strict_empty,
        "mistake",
        "I keep cumsum < p and never force the first token, so a row whose top token alone "
        "holds p or more keeps nothing.",
    ),
    BlindCase(
        CHECK,
        "mass_before_le_p",
        top_p_before_le,
        "mistake",
        "I test the mass before each token with <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that "
        "likely, so all tokens tied with it stay.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted without descending=True, so the least likely tokens are collected first.",
    ),
    BlindCase(
        CHECK,
        "zero_outside_nucleus",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the keep mask, so the dropped tokens get logit 0.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I return the renormalized probabilities of the nucleus instead of the logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_order,
        "mistake",
        "I filter the sorted logits and return them sorted, not in the vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I computed the keep mask in sorted order and put it directly on the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_unsort,
        "mistake",
        "To undo the sort I used keep_sorted.gather(-1, order), which applies the permutation "
        "again instead of inverting it.",
    ),
    BlindCase(
        CHECK,
        "rows_mixed",
        top_p_rows_mixed,
        "mistake",
        "I flattened the batch and sorted all its probabilities together (each row's softmax "
        "scaled by the number of rows).",
    ),
    BlindCase(
        CHECK,
        "input_changed_in_place",
        top_p_in_place,
        "mistake",
        "I set logits[remove] = -inf on the caller's tensor and return it.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_logit_cumsum,
        "mistake",
        "I took the cumulative sum of the sorted logits, forgetting the softmax.",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse",
        top_p_argsort_inverse,
        "correct",
        "argsort for the order and order.argsort() as its inverse, then a gather; torch.where "
        "for the fill.",
    ),
    BlindCase(
        CHECK,
        "scatter_sorted_logits",
        top_p_scatter_sorted_logits,
        "correct",
        "Fills the sorted logits with -inf where the mass before a token reaches p, then "
        "scatters the sorted logits back.",
    ),
    BlindCase(
        CHECK,
        "python_row_loop",
        top_p_row_loop,
        "correct",
        "One row at a time on a clone, adding probabilities in a Python loop until p is reached.",
    ),
    BlindCase(
        CHECK,
        "count_then_first_places",
        top_p_count_then_topk,
        "correct",
        "Counts the tokens the nucleus needs and keeps that many first places of the sort; "
        "an extra min_keep argument with default 1.",
    ),
]
