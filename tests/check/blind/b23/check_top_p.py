"""Blind set B23, check_top_p (chapter 18): nucleus filtering as readers write it."""

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


def top_p_less_equal(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p  # '<=' keeps one more token when the ones before hold exactly p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_hf_shift(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    remove = probs.cumsum(-1) > p
    remove[..., 1:] = remove[..., :-1].clone()  # shift right: keep the token that crosses p
    remove[..., 0] = False
    return logits.masked_fill(_unsort(remove, order), float("-inf"))


def top_p_empty_row(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p  # no guarantee that the first token survives
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    cutoff = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < cutoff, float("-inf"))  # every token >= cutoff kept


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # forgot descending=True
    before = probs.cumsum(-1) - probs
    keep = before < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), 0.0)  # 0, as if it were a probability


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    keep = (sorted_probs.cumsum(-1) - sorted_probs) < p
    keep[..., 0] = True
    return probs * _unsort(keep, order)  # the filtered probabilities, not logits


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = (probs.cumsum(-1) - probs) < p
    keep[..., 0] = True
    return sorted_logits.masked_fill(~keep, float("-inf"))  # left in sorted order


def top_p_mask_not_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    keep[..., 0] = True
    return logits.masked_fill(~keep, float("-inf"))  # the sorted mask laid on unsorted logits


def top_p_flattened_batch(logits: Tensor, p: float) -> Tensor:
    V = logits.shape[-1]
    flat = logits.reshape(-1)  # I flattened the batch to sort once
    probs, order = (flat.softmax(-1)).sort(descending=True)
    before = probs.cumsum(-1) - probs
    keep = before < p
    keep[0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept.view(-1, V).view(logits.shape), float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    keep[..., 0] = True
    logits[~_unsort(keep, order)] = float("-inf")  # written into the caller's tensor
    return logits


def top_p_cumsum_of_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    before = sorted_logits.cumsum(-1) - sorted_logits  # forgot the softmax
    keep = before < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_remove_mask(logits: Tensor, p: float) -> Tensor:
    """A "remove" mask (mass before >= p), scattered back with index_put on a clone."""
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    remove_sorted = probs.cumsum(dim=-1) - probs >= p
    remove_sorted[..., 0] = False
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    out = logits.clone()
    out[remove] = float("-inf")
    return out


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """Row by row in Python, gathering back with the inverse permutation."""
    flat = logits.reshape(-1, logits.shape[-1])
    rows = []
    for row in flat:
        probs, order = row.softmax(0).sort(descending=True)
        before = probs.cumsum(0) - probs
        keep_sorted = before < p
        keep_sorted[0] = True
        keep = keep_sorted.gather(0, order.argsort())
        rows.append(torch.where(keep, row, torch.full_like(row, float("-inf"))))
    return torch.stack(rows).reshape(logits.shape)


def top_p_count_then_topk(logits: Tensor, p: float) -> Tensor:
    """Count how many tokens the nucleus needs, then keep that many by the sort's order."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    n = ((probs.cumsum(-1) - probs) < p).sum(-1, keepdim=True).clamp(min=1)  # (..., 1)
    rank = torch.arange(logits.shape[-1], device=logits.device).expand_as(probs)
    keep_sorted = rank < n
    keep = torch.empty_like(keep_sorted).scatter_(-1, order, keep_sorted)
    return torch.where(keep, logits, torch.tensor(float("-inf"), dtype=logits.dtype))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "keep = cumsum < p: the cumulative sum with the token, so the crossing token is lost",
    ),
    BlindCase(
        CHECK,
        "less_equal_before",
        top_p_less_equal,
        "mistake",
        "keep where the mass before <= p instead of < p",
    ),
    BlindCase(
        CHECK,
        "hf_style_shift",
        top_p_hf_shift,
        "mistake",
        "remove = cumsum > p, shifted right by one (as in a library I had seen)",
    ),
    BlindCase(
        CHECK,
        "row_can_be_empty",
        top_p_empty_row,
        "mistake",
        "keep = cumsum <= p, and I never forced the most likely token to stay",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_threshold,
        "mistake",
        "I found the last needed token's probability and kept every token at least as likely",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "sort() without descending=True: the least likely tokens are kept",
    ),
    BlindCase(
        CHECK,
        "zero_fill",
        top_p_zero_fill,
        "mistake",
        "I set the removed logits to 0 instead of -inf",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the filtered probabilities (zeros outside) instead of logits",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_output,
        "mistake",
        "I sorted the logits and returned them filtered but still in sorted order",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_mask_not_unsorted,
        "mistake",
        "I never scattered the mask back: the sorted keep-mask is applied to unsorted logits",
    ),
    BlindCase(
        CHECK,
        "batch_flattened",
        top_p_flattened_batch,
        "mistake",
        "I flattened all rows into one before the softmax and sort: rows mixed",
    ),
    BlindCase(
        CHECK,
        "input_changed_in_place",
        top_p_in_place,
        "mistake",
        "logits[~keep] = -inf: written into the caller's tensor",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_cumsum_of_logits,
        "mistake",
        "I forgot the softmax and summed the sorted logits themselves",
    ),
    BlindCase(
        CHECK,
        "remove_mask_index_put",
        top_p_remove_mask,
        "correct",
        "a remove mask (mass before >= p), first token forced, index_put on a clone",
    ),
    BlindCase(
        CHECK,
        "python_row_loop",
        top_p_row_loop,
        "correct",
        "a Python loop over the rows; unsorted with gather(order.argsort())",
    ),
    BlindCase(
        CHECK,
        "count_then_rank",
        top_p_count_then_topk,
        "correct",
        "count the tokens needed, keep that many by rank, scatter_ into an empty mask",
    ),
]
