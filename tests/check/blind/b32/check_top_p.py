"""Blind set B32, check_top_p (chapter 18): the nucleus filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _sorted(logits: Tensor) -> tuple[Tensor, Tensor]:
    """Probabilities sorted from the most likely, and the order that sorts them."""
    return logits.softmax(dim=-1).sort(dim=-1, descending=True)


def _unsort(keep_sorted: Tensor, order: Tensor) -> Tensor:
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep_sorted = probs.cumsum(dim=-1) < p  # the tokens up to p
    keep_sorted[..., 0] = True
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    before = probs.cumsum(dim=-1) - probs
    keep_sorted = before <= p
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_cumsum_le_no_first(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep_sorted = probs.cumsum(dim=-1) <= p  # the mass kept stays within p
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(dim=-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    n_keep = (before < p).sum(dim=-1, keepdim=True)  # how many tokens are needed
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one needed
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending_sort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1)  # sort() is ascending
    before = probs.cumsum(dim=-1) - probs
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_zero_outside(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    return logits * _unsort(keep_sorted, order)  # multiply by the mask: the rest becomes 0


def top_p_returns_probabilities(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    kept = _unsort(keep_sorted, order)
    return logits.softmax(dim=-1).masked_fill(~kept, float("-inf"))


def top_p_sorted_order_returned(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    return sorted_logits.masked_fill(~keep_sorted, float("-inf"))


def top_p_sorted_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = _sorted(logits)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    return logits.masked_fill(~keep_sorted, float("-inf"))  # forgot to undo the sort


def top_p_gather_instead_of_scatter(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    kept = keep_sorted.gather(-1, order)  # "put the mask back in the vocabulary's order"
    return logits.masked_fill(~kept, float("-inf"))


def top_p_softmax_over_batch(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=0).sort(dim=-1, descending=True)  # dim=0: the rows
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep_sorted[..., 0] = True
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    logits[~_unsort(keep_sorted, order)] = float("-inf")
    return logits


def top_p_logits_as_probs(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    cum = sorted_logits.cumsum(dim=-1)  # forgot the softmax
    keep_sorted = (cum - sorted_logits) < p
    keep_sorted[..., 0] = True
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_float32(logits: Tensor, p: float) -> Tensor:
    logits = logits.float()  # sampling happens in float32 anyway
    probs, order = _sorted(logits)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_topk_count(logits: Tensor, p: float) -> Tensor:
    """Counts the tokens whose cumulative sum stays below p and keeps that many (no +1)."""
    probs, _ = _sorted(logits)
    k = int((probs.cumsum(dim=-1) < p).sum(dim=-1).max().clamp(min=1))  # one k for the batch
    kept = torch.zeros_like(logits, dtype=torch.bool)
    kept.scatter_(-1, logits.topk(k, dim=-1).indices, True)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_shifted_cumsum(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    cum = probs.cumsum(dim=-1)
    remove = cum >= p
    remove[..., 1:] = remove[..., :-1].clone()  # shift right: keep the token that reaches p
    remove[..., 0] = False
    remove_unsorted = remove.scatter(-1, order, remove)
    return logits.masked_fill(remove_unsorted, float("-inf"))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs, order = flat[r].softmax(-1).sort(descending=True)
        total = 0.0
        for prob, idx in zip(probs.tolist(), order.tolist(), strict=True):
            if total >= p:
                break
            out[r, idx] = flat[r, idx]
            total += prob
    return out.reshape(logits.shape)


def top_p_argsort_inverse(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep_sorted[..., 0] = True
    inverse = order.argsort(dim=-1)  # where each vocabulary entry went in the sort
    kept = keep_sorted.gather(-1, inverse)
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum (including themselves) is below p, so the "
        "token that crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "before_le_p",
        top_p_before_le,
        "mistake",
        "I kept a token when the mass before it is <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "cumsum_le_no_first",
        top_p_cumsum_le_no_first,
        "mistake",
        "I kept the tokens with cumsum <= p and did not force the most likely token in, so a "
        "row whose top token holds more than p is empty.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that "
        "likely, so ties with it are all kept.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending_sort,
        "mistake",
        "I sorted with .sort(dim=-1) and forgot descending=True.",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        top_p_zero_outside,
        "mistake",
        "I multiplied the logits by the mask, so the removed tokens get logit 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probabilities,
        "mistake",
        "I returned the filtered probabilities instead of the filtered logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_order_returned,
        "mistake",
        "I returned the sorted logits with the tail set to -inf, forgetting to put them back in "
        "the vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_on_unsorted,
        "mistake",
        "I computed the keep mask in sorted order and applied it directly to the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_instead_of_scatter,
        "mistake",
        "I put the mask back with gather(-1, order) instead of scatter, which applies the "
        "permutation the wrong way round.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        top_p_softmax_over_batch,
        "mistake",
        "I took the softmax over dim=0, mixing the rows of a batch.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I wrote -inf into the logits tensor in place and returned it.",
    ),
    BlindCase(
        CHECK,
        "logits_as_probabilities",
        top_p_logits_as_probs,
        "mistake",
        "I took the cumulative sum of the sorted logits and forgot the softmax.",
    ),
    BlindCase(
        CHECK,
        "float32_cast",
        top_p_float32,
        "mistake",
        "I cast the logits to float32 first, so a float64 input comes back as float32.",
    ),
    BlindCase(
        CHECK,
        "topk_count_without_crossing",
        top_p_topk_count,
        "mistake",
        "I counted the tokens with cumsum < p and reused top_k_filter with that k (the largest "
        "over the batch), so the token that crosses p is missing and rows share one k.",
    ),
    BlindCase(
        CHECK,
        "shifted_cumsum",
        top_p_shifted_cumsum,
        "correct",
        "Remove where cumsum >= p, shifted right by one so the token that reaches p stays, "
        "then scattered back (as Hugging Face writes it).",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        top_p_row_loop,
        "correct",
        "A Python loop over the rows, adding tokens until the mass reaches p.",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse",
        top_p_argsort_inverse,
        "correct",
        "The mask brought back with gather on the inverse permutation (argsort of the order).",
    ),
]
