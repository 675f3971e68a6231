"""Blind set B14, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p  # the cumulative sum with the token itself
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_le_before(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs <= p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_may_be_empty(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p  # no exception for the first token
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_p, _ = probs.sort(-1, descending=True)
    before = sorted_p.cumsum(-1) - sorted_p
    n = (before < p).sum(-1, keepdim=True)  # how many tokens are needed
    cutoff = sorted_p.gather(-1, n - 1)  # the probability of the last one needed
    return logits.masked_fill(probs < cutoff, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # ascending
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits * kept  # zero outside the nucleus


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sp, order = probs.sort(-1, descending=True)
    keep = sp.cumsum(-1) - sp < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    filtered = probs.masked_fill(~kept, 0.0)
    return filtered / filtered.sum(-1, keepdim=True)  # renormalised, ready to sample


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # mask laid on the unsorted logits


def top_p_gather_not_scatter(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = keep.gather(-1, order)  # back to vocabulary order (wrong direction)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_rows_mixed(logits: Tensor, p: float) -> Tensor:
    shape = logits.shape
    flat = logits.reshape(-1)  # one distribution over everything
    probs, order = flat.softmax(-1).sort(descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return flat.masked_fill(~kept, float("-inf")).view(shape)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    logits[~kept] = float("-inf")
    return logits


# ---------------------------------------------------------------- correct variants


def top_p_argsort_inverse(logits: Tensor, p: float) -> Tensor:
    """The sorted mask brought back with the inverse permutation (argsort of the order)."""
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    mass_before = torch.cumsum(probs, dim=-1) - probs
    keep_sorted = mass_before < p
    keep_sorted[..., 0] = True
    kept = keep_sorted.gather(-1, order.argsort(dim=-1))
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """A Python loop over the rows, copying into a clone."""
    out = logits.clone()
    flat = out.reshape(-1, out.shape[-1])
    for row in flat:
        probs, order = row.softmax(-1).sort(descending=True)
        total = 0.0
        for i, (q, j) in enumerate(zip(probs.tolist(), order.tolist())):
            if i > 0 and total >= p:
                row[j] = float("-inf")
            total += q
    return flat.view(logits.shape)


def top_p_shifted_cumsum(logits: Tensor, p: float) -> Tensor:
    """The mass before each token as a shifted cumsum (zeros prepended), scattered back."""
    probs, order = torch.sort(torch.softmax(logits, -1), dim=-1, descending=True)
    csum = probs.cumsum(-1)
    before = torch.cat([torch.zeros_like(csum[..., :1]), csum[..., :-1]], dim=-1)
    remove_sorted = before >= p
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, -float("inf"))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept tokens while cumsum <= p, which drops the token that crosses p.",
    ),
    BlindCase(
        CHECK,
        "before_le_p",
        top_p_le_before,
        "mistake",
        "I compared the mass before the token with <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "row_can_be_empty",
        top_p_may_be_empty,
        "mistake",
        "cumsum < p without always keeping the first token: rows can end up empty.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_threshold,
        "mistake",
        "I found the last needed token's probability and kept everything at least that.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted ascending, so I keep the least likely tokens.",
    ),
    BlindCase(
        CHECK,
        "zero_not_minus_inf",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the mask, giving 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the renormalised probabilities instead of logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_output",
        top_p_sorted_output,
        "mistake",
        "I returned the sorted logits, not in vocabulary order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I applied the mask computed in sorted order directly to the original logits.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_not_scatter,
        "mistake",
        "I brought the mask back with gather(order) instead of scatter.",
    ),
    BlindCase(
        CHECK,
        "rows_mixed",
        top_p_rows_mixed,
        "mistake",
        "I flattened the batch and took one softmax over every row together.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I wrote -inf into the caller's logits in place.",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse",
        top_p_argsort_inverse,
        "correct",
        "Uses gather with the inverse permutation (argsort) and torch.where.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        top_p_row_loop,
        "correct",
        "A Python loop over rows on a clone, summing the mass token by token.",
    ),
    BlindCase(
        CHECK,
        "shifted_cumsum",
        top_p_shifted_cumsum,
        "correct",
        "Mass before as a shifted cumsum and a 'remove' mask scattered back.",
    ),
]
