"""Blind set B31, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

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
    keep = probs.cumsum(-1) < p  # the token that crosses p is dropped
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_cumsum_le_no_first(logits: Tensor, p: float) -> Tensor:
    """cumsum <= p and nothing else: a row whose best token holds more than p is emptied."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    """Find the probability of the last token needed, keep every token at least that likely."""
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)
    threshold = sorted_probs.gather(-1, n_keep - 1)
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # ascending by default
    before = probs.cumsum(-1) - probs
    keep = before < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    return logits.masked_fill(~_unsort(keep, order), 0.0)


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    """Filtered and renormalized probabilities returned instead of logits."""
    all_probs = logits.softmax(-1)
    probs, order = all_probs.sort(-1, descending=True)
    keep = _unsort((probs.cumsum(-1) - probs) < p, order)
    kept = all_probs * keep
    return kept / kept.sum(-1, keepdim=True)


def top_p_sorted_order(logits: Tensor, p: float) -> Tensor:
    """The filtered logits returned in sorted order."""
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = (probs.cumsum(-1) - probs) < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    return logits.masked_fill(~keep, float("-inf"))


def top_p_gather_to_unsort(logits: Tensor, p: float) -> Tensor:
    """Went back to the vocabulary's order with gather instead of scatter."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = keep_sorted.gather(-1, order)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = _unsort((probs.cumsum(-1) - probs) < p, order)
    logits[~keep] = float("-inf")
    return logits


def top_p_softmax_over_batch(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(0).sort(-1, descending=True)  # dim 0 of a (B, V) batch
    keep = (probs.cumsum(-1) - probs) < p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_flattened(logits: Tensor, p: float) -> Tensor:
    """The batch flattened to one distribution over every (row, token)."""
    flat = logits.reshape(-1)
    probs, order = flat.softmax(-1).sort(descending=True)
    keep = (probs.cumsum(0) - probs) < p
    keep[0] = True
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def top_p_cumsum_of_logits(logits: Tensor, p: float) -> Tensor:
    """Sorted and accumulated the logits themselves, no softmax."""
    vals, order = logits.sort(-1, descending=True)
    keep = (vals.cumsum(-1) - vals) < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_hard_coded(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < 0.9  # the chapter's top-p 0.9
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_tail_mass(logits: Tensor, p: float) -> Tensor:
    """Read p as the mass to cut from the tail: keep while the mass before is below 1 - p."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < 1 - p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """One row at a time with argsort, accumulating in Python until p is reached."""
    out = logits.clone()
    rows = out.view(-1, out.shape[-1])
    for row in rows:
        probs = row.softmax(-1)
        idx = torch.argsort(probs, descending=True)
        mass = 0.0
        keep = torch.zeros_like(row, dtype=torch.bool)
        for i in idx.tolist():
            if mass >= p:
                break
            keep[i] = True
            mass += probs[i].item()
        row.masked_fill_(~keep, float("-inf"))
    return out


def top_p_inverse_permutation(logits: Tensor, p: float) -> Tensor:
    """The inverse permutation order.argsort() to undo the sort, and where() to fill."""
    probs = logits.softmax(-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = mass_before < p
    keep_sorted[..., 0] = True
    keep = keep_sorted.gather(-1, order.argsort(-1))
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_sorted_logits_scatter(logits: Tensor, p: float) -> Tensor:
    """Sort the logits, filter them in sorted order, scatter the filtered values back."""
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
    probs = torch.softmax(sorted_logits, dim=-1)
    remove = probs.cumsum(-1) - probs >= p
    remove[..., 0] = False
    filtered = sorted_logits.masked_fill(remove, float("-inf"))
    return torch.empty_like(logits).scatter_(-1, order, filtered)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept tokens while cumsum (the token included) < p, so the token crossing p is lost.",
    ),
    BlindCase(
        CHECK,
        "cumsum_le_p_no_first",
        top_p_cumsum_le_no_first,
        "mistake",
        "keep = cumsum <= p and nothing else; a row whose best token exceeds p is empty.",
    ),
    BlindCase(
        CHECK,
        "before_le_p",
        top_p_before_le,
        "mistake",
        "keep = mass before <= p: one token too many when the earlier ones hold exactly p.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I kept every token at least as likely as the last one needed (ties all kept).",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted without descending=True, so the nucleus is built from the least likely tokens.",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        top_p_zero_fill,
        "mistake",
        "I set the removed logits to 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the renormalized probabilities of the nucleus, not logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_order,
        "mistake",
        "I filtered the sorted logits and returned them in sorted order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I laid the mask computed in sorted order directly on the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_to_unsort,
        "mistake",
        "I un-sorted the mask with gather(-1, order), which applies the permutation again.",
    ),
    BlindCase(
        CHECK,
        "input_changed",
        top_p_in_place,
        "mistake",
        "I wrote -inf into the caller's logits in place and returned them.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        top_p_softmax_over_batch,
        "mistake",
        "softmax(0): for a (B, V) batch the probabilities are taken across the rows.",
    ),
    BlindCase(
        CHECK,
        "batch_flattened",
        top_p_flattened,
        "mistake",
        "I flattened the batch and built one nucleus over all rows together.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_cumsum_of_logits,
        "mistake",
        "I accumulated the sorted logits themselves, without a softmax.",
    ),
    BlindCase(
        CHECK,
        "p_hard_coded",
        top_p_hard_coded,
        "mistake",
        "I wrote 0.9, the chapter's top_p, instead of the argument p.",
    ),
    BlindCase(
        CHECK,
        "p_as_tail_mass",
        top_p_tail_mass,
        "mistake",
        "I read p as the tail to cut: keep while the mass before is below 1 - p.",
    ),
    BlindCase(
        CHECK,
        "python_row_loop",
        top_p_row_loop,
        "correct",
        "Each row in a Python loop with argsort, adding probabilities until the mass reaches p.",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation",
        top_p_inverse_permutation,
        "correct",
        "Undo the sort with gather on order.argsort(), then torch.where to fill -inf.",
    ),
    BlindCase(
        CHECK,
        "scatter_filtered_logits",
        top_p_sorted_logits_scatter,
        "correct",
        "Filter the sorted logits, then scatter the filtered values back to their places.",
    ),
]
