"""Blind cases for check_top_p (chapter 18), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def crossing_token_dropped(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) <= p
    keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def less_or_equal_before(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(dim=-1) - probs) <= p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(dim=-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    n_keep = (before < p).sum(dim=-1, keepdim=True)  # how many tokens are needed
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, float("-inf"))


def sorted_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    return logits.masked_fill(~keep_sorted, float("-inf"))


def softmax_over_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=0).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def zero_outside(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * keep  # removed tokens get 0


def changes_input(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~keep] = float("-inf")
    return logits


def ascending_sort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1)  # forgot descending=True
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def shifted_removal_mask(logits: Tensor, p: float) -> Tensor:
    """Correct: remove where the cumulative sum reaches p, shifted right by one place."""
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    cum = probs.cumsum(dim=-1)
    remove = cum >= p
    remove = torch.cat([torch.zeros_like(remove[..., :1]), remove[..., :-1]], dim=-1)
    remove_vocab = remove.scatter(-1, order, remove)
    return logits.masked_fill(remove_vocab, float("-inf"))


def inverse_permutation(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    """Correct: the mask brought back with the inverse permutation (argsort of the order)."""
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    before = torch.cumsum(probs, dim=-1) - probs
    keep_sorted = before < p
    keep_sorted[..., :min_keep] = True
    inverse = order.argsort(dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    out = logits.clone()
    out[~keep] = float("-inf")
    return out


CASES = [
    BlindCase(
        CHECK,
        "crossing_token_dropped",
        crossing_token_dropped,
        "mistake",
        "I kept the tokens whose cumulative sum, the token included, is <= p",
    ),
    BlindCase(
        CHECK,
        "less_or_equal_before",
        less_or_equal_before,
        "mistake",
        "I kept a token when the mass before it is <= p instead of < p",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        probability_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least "
        "that likely",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        sorted_mask_on_unsorted,
        "mistake",
        "I computed the mask in sorted order and applied it to the logits directly",
    ),
    BlindCase(
        CHECK,
        "softmax_over_dim0",
        softmax_over_dim0,
        "mistake",
        "I wrote softmax(dim=0), right for one row, wrong across a batch",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        zero_outside,
        "mistake",
        "I multiplied the logits by the mask, so removed tokens get logit 0",
    ),
    BlindCase(
        CHECK,
        "changes_input",
        changes_input,
        "mistake",
        "I wrote -inf into the logits tensor I was given and returned it",
    ),
    BlindCase(
        CHECK, "ascending_sort", ascending_sort, "mistake", "I forgot descending=True in the sort"
    ),
    BlindCase(
        CHECK,
        "shifted_removal_mask",
        shifted_removal_mask,
        "correct",
        "the Hugging Face way: remove where cumsum >= p, the mask shifted right by one, "
        "scattered back",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation",
        inverse_permutation,
        "correct",
        "the sorted mask gathered back with argsort of the order, written into a clone; "
        "an optional min_keep argument",
    ),
]
