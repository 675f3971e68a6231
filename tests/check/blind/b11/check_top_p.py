"""Blind set B11, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p  # the tokens whose running total stays within p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_less_equal(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_no_first_forced(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    keep = torch.cumsum(probs, dim=-1) < p
    # shift right so that the token crossing p stays ... I shifted the wrong way
    keep = torch.cat([keep[..., 1:], torch.zeros_like(keep[..., :1])], dim=-1)
    kept = keep.scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the smallest kept probability
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # sorted
    before = probs.cumsum(-1) - probs
    keep = before < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits * kept  # zero out the rest


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    keep = sorted_probs.cumsum(-1) - sorted_probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return probs.masked_fill(~kept, float("-inf"))


def top_p_sorted_logits_returned(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # the mask is in sorted order


def top_p_batch_flattened(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)  # one long row for simplicity
    probs, order = flat.softmax(-1).sort(descending=True)
    keep = probs.cumsum(-1) - probs < p * (flat.numel() // logits.shape[-1])
    keep[0] = True
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return flat.masked_fill(~kept, float("-inf")).reshape(logits.shape)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    logits[~kept] = float("-inf")  # no copy needed
    return logits


def top_p_renormalised(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    filtered = logits.masked_fill(~kept, float("-inf"))
    return filtered.log_softmax(-1)  # the nucleus renormalised, as log-probabilities


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(0).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_argsort_gather(logits: Tensor, p: float) -> Tensor:
    """argsort, then the inverse permutation (argsort of argsort) with gather; torch.where."""
    order = logits.argsort(dim=-1, descending=True)
    probs = logits.softmax(dim=-1).gather(-1, order)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep_sorted[..., 0] = True
    keep = keep_sorted.gather(-1, order.argsort(dim=-1))
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_rows_loop(logits: Tensor, p: float) -> Tensor:
    """One row at a time in Python on a (N, V) view; the result built in a new tensor."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for i in range(flat.shape[0]):
        probs = flat[i].softmax(-1)
        sorted_probs, order = probs.sort(descending=True)
        before = sorted_probs.cumsum(0) - sorted_probs
        n = max(int((before < p).sum()), 1)
        chosen = order[:n]
        out[i, chosen] = flat[i, chosen]
    return out.reshape(logits.shape)


def top_p_scatter_inplace_clone(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    """Works on a clone, filled in place; an extra min_keep argument (default 1)."""
    out = logits.clone()
    probs, order = torch.sort(out.softmax(-1), dim=-1, descending=True)
    remove_sorted = (probs.cumsum(-1) - probs) >= p
    remove_sorted[..., :min_keep] = False
    remove = torch.zeros_like(remove_sorted)
    remove.scatter_(-1, order, remove_sorted)
    out.masked_fill_(remove, -torch.inf)
    return out


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum (with themselves) is <= p, so the token that "
        "crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        top_p_less_equal,
        "mistake",
        "I tested the mass before each token with <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "shift_wrong_way_no_first",
        top_p_no_first_forced,
        "mistake",
        "I shifted the cumsum < p mask to keep the crossing token, but shifted it left, and did "
        "not force the most likely token, so a row can be left empty.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I found the smallest kept probability and kept every token at least that likely, so "
        "ties with it are all kept.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted in ascending order (sort's default), so the least likely tokens are kept.",
    ),
    BlindCase(
        CHECK,
        "zero_fill",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the mask, which gives 0 instead of -inf outside the nucleus.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the filtered probabilities instead of the logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_logits_returned",
        top_p_sorted_logits_returned,
        "mistake",
        "I filtered the sorted logits and returned them without putting them back in "
        "vocabulary order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I computed the mask on the sorted probabilities and applied it directly to the "
        "unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "batch_flattened",
        top_p_batch_flattened,
        "mistake",
        "I flattened the batch into one row and sorted it all together, with p scaled by the "
        "number of rows.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I set logits[~kept] = -inf on the input itself and returned it.",
    ),
    BlindCase(
        CHECK,
        "renormalised",
        top_p_renormalised,
        "mistake",
        "I returned log_softmax of the filtered logits, so the kept values are changed.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        top_p_softmax_dim0,
        "mistake",
        "softmax(0): over the rows of the batch instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "argsort_gather",
        top_p_argsort_gather,
        "correct",
        "argsort and the inverse permutation with gather instead of scatter; torch.where.",
    ),
    BlindCase(
        CHECK,
        "rows_loop",
        top_p_rows_loop,
        "correct",
        "A Python loop over the rows of a (N, V) view, writing the kept logits into a new "
        "-inf tensor.",
    ),
    BlindCase(
        CHECK,
        "clone_inplace_min_keep",
        top_p_scatter_inplace_clone,
        "correct",
        "A clone filled in place with masked_fill_; an extra min_keep argument (default 1).",
    ),
]
