"""Blind set B16, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def tp_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p  # tokens while the running total stays below p
    keep[..., 0] = True  # never an empty row
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def tp_mass_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p  # "up to p"
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def tp_remove_above_p(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    remove = probs.cumsum(dim=-1) > p  # drop what lies beyond p
    remove = torch.zeros_like(remove).scatter(-1, order, remove)
    return logits.masked_fill(remove, float("-inf"))


def tp_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    smallest = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < smallest, float("-inf"))


def tp_ascending_sort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # sorted, but smallest first
    before = probs.cumsum(-1) - probs
    keep = before < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def tp_zero_outside(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits * kept  # the tokens outside the nucleus get 0


def tp_returns_probabilities(logits: Tensor, p: float) -> Tensor:
    all_probs = logits.softmax(-1)
    probs, order = all_probs.sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    filtered = all_probs * kept
    return filtered / filtered.sum(-1, keepdim=True)  # ready to sample from


def tp_sorted_order_returned(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = (probs.cumsum(-1) - probs) < p
    return sorted_logits.masked_fill(~keep, float("-inf"))  # never put back in place


def tp_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    return logits.masked_fill(~keep, float("-inf"))  # the mask of the sorted row


def tp_scatter_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(0, order, keep)  # dim 0, as for one row
    return logits.masked_fill(~kept, float("-inf"))


def tp_softmax_over_everything(logits: Tensor, p: float) -> Tensor:
    V = logits.shape[-1]
    flat = logits.reshape(-1)
    probs, order = flat.softmax(0).sort(descending=True)  # one distribution for the batch
    keep = (probs.cumsum(0) - probs) < p
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return logits.masked_fill(~kept.view(*logits.shape[:-1], V), float("-inf"))


def tp_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    logits[~kept] = float("-inf")  # no copy needed
    return logits


# ---------------------------------------------------------------- correct variants


def tp_inverse_permutation(logits: Tensor, p: float) -> Tensor:
    """The sorted mask put back with the inverse permutation (argsort of the order)."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = mass_before < p
    keep_sorted[..., 0] = True
    inverse = order.argsort(dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def tp_row_loop(logits: Tensor, p: float) -> Tensor:
    """One row at a time over logits.reshape(-1, V); the result written into a clone."""
    V = logits.shape[-1]
    rows = logits.reshape(-1, V)
    out = rows.clone()
    for i in range(rows.shape[0]):
        probs, order = rows[i].softmax(0).sort(descending=True)
        before = probs.cumsum(0) - probs
        n = max(1, int((before < p).sum()))
        out[i, order[n:]] = float("-inf")
    return out.view(logits.shape)


def tp_scatter_sorted_logits(logits: Tensor, p: float, min_tokens: int = 1) -> Tensor:
    """The filtered sorted logits scattered back to their places; min_tokens an extra argument."""
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    sorted_logits = logits.gather(-1, order)
    drop = (probs.cumsum(dim=-1) - probs) >= p
    drop[..., :min_tokens] = False
    filtered = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.empty_like(logits).scatter_(-1, order, filtered)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        tp_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum (with the token itself) is below p, so the "
        "token that crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "mass_before_le",
        tp_mass_before_le,
        "mistake",
        "I kept a token when the mass before it is <= p, one token too many when the more "
        "likely tokens hold exactly p.",
    ),
    BlindCase(
        CHECK,
        "remove_cumsum_above_p",
        tp_remove_above_p,
        "mistake",
        "I removed the tokens whose cumulative sum exceeds p; when the top token alone holds "
        "more than p the row is all -inf.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        tp_probability_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that "
        "likely, so tokens tied with it are all kept.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        tp_ascending_sort,
        "mistake",
        "I sorted the probabilities without descending=True, so the least likely tokens are kept.",
    ),
    BlindCase(
        CHECK,
        "zero_outside_nucleus",
        tp_zero_outside,
        "mistake",
        "I multiplied the logits by the keep mask, which gives 0, not -inf, outside the nucleus.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        tp_returns_probabilities,
        "mistake",
        "I returned the renormalised probabilities of the nucleus instead of logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        tp_sorted_order_returned,
        "mistake",
        "I filtered the sorted logits and returned them sorted, not in the vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        tp_sorted_mask_unsorted,
        "mistake",
        "I laid the mask computed on the sorted probabilities directly onto the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "scatter_along_dim0",
        tp_scatter_dim0,
        "mistake",
        "I scattered the sorted mask back with scatter(0, ...), which is right for one row but "
        "mixes the rows of a batch.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_flattened_batch",
        tp_softmax_over_everything,
        "mistake",
        "I flattened the logits and took one softmax and one sort over the whole batch.",
    ),
    BlindCase(
        CHECK,
        "input_changed_in_place",
        tp_in_place,
        "mistake",
        "I wrote -inf into the caller's logits with logits[~kept] = -inf and returned them.",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation",
        tp_inverse_permutation,
        "correct",
        "The sorted mask put back by gathering with order.argsort(), torch.where for the -inf.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        tp_row_loop,
        "correct",
        "A Python loop over the rows of reshape(-1, V), counting the tokens to keep and writing "
        "-inf into a clone.",
    ),
    BlindCase(
        CHECK,
        "scatter_sorted_logits",
        tp_scatter_sorted_logits,
        "correct",
        "The sorted logits filtered and scattered back into an empty tensor; a drop mask with "
        ">= p; min_tokens an extra argument with a default.",
    ),
]
