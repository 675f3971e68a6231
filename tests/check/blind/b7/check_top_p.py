"""Blind set B7, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

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
    keep = probs.cumsum(-1) <= p  # the tokens whose running total stays within p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_hf_shift_le(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum > p
    remove[..., 1:] = remove[..., :-1].clone()  # shift right: keep the token that crosses p
    remove[..., 0] = False
    return logits.masked_fill(_unsort(remove, order), float("-inf"))


def top_p_cumsum_top_forced(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p
    keep[..., 0] = True  # so that a row is never empty
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    needed = ((sorted_probs.cumsum(-1) - sorted_probs) < p).sum(-1, keepdim=True)  # how many
    cutoff = sorted_probs.gather(-1, needed - 1)  # the probability of the last one needed
    return logits.masked_fill(probs < cutoff, float("-inf"))


def top_p_ascending_sort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # forgot descending=True
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~_unsort(keep, order), 0.0)


def top_p_returns_probabilities(logits: Tensor, p: float) -> Tensor:
    all_probs = logits.softmax(-1)
    probs, order = all_probs.sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return all_probs * _unsort(keep, order)  # zero outside the nucleus


def top_p_sorted_order_returned(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # forgot to put the mask back in order


def top_p_cumsum_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(0) - probs  # dim 0 is the vocabulary for one row of logits
    keep = before < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    logits[~_unsort(keep, order)] = float("-inf")
    return logits


def top_p_renormalized_log_probs(logits: Tensor, p: float) -> Tensor:
    all_probs = logits.softmax(-1)
    probs, order = all_probs.sort(-1, descending=True)
    keep = _unsort(probs.cumsum(-1) - probs < p, order)
    kept = all_probs * keep
    return (kept / kept.sum(-1, keepdim=True)).log()  # the nucleus renormalized, as logits


# ---------------------------------------------------------------- correct variants


def top_p_argsort_gather(logits: Tensor, p: float) -> Tensor:
    """Sort the logits themselves, exclusive cumulative sum by torch.cat, mask put back in the
    vocabulary's order with the inverse permutation."""
    order = logits.argsort(dim=-1, descending=True)
    probs = logits.gather(-1, order).softmax(-1)
    cum = probs.cumsum(-1)
    before = torch.cat([torch.zeros_like(cum[..., :1]), cum[..., :-1]], dim=-1)
    keep_sorted = (before < p) | (torch.arange(probs.shape[-1]) == 0)
    inverse = order.argsort(dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """One row at a time, in Python, after flattening the leading dimensions."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs = flat[r].softmax(-1)
        total = 0.0
        for idx in probs.argsort(descending=True).tolist():
            if total >= p:
                break
            out[r, idx] = flat[r, idx]
            total += float(probs[idx])
    return out.reshape(logits.shape)


def top_p_remove_mask(logits: Tensor, p: float, min_tokens: int = 1) -> Tensor:
    """The removal mask (mass before the token >= p), scattered back; an extra min_tokens."""
    if p >= 1.0:
        return logits.clone()
    sorted_probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    remove = (sorted_probs.cumsum(dim=-1) - sorted_probs) >= p
    remove[..., :min_tokens] = False
    remove = remove.scatter(-1, order, remove)
    return logits.masked_fill(remove, float("-inf"))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_including_token",
        top_p_cumsum_with_token,
        "mistake",
        "I keep a token when the cumulative sum including it is <= p: the token that crosses "
        "p is dropped, and a row whose top token alone holds more than p keeps nothing.",
    ),
    BlindCase(
        CHECK,
        "hf_shift_keeps_one_too_many_at_p",
        top_p_hf_shift_le,
        "mistake",
        "I ported the usual 'remove cum > p, shifted right by one' recipe: a token is kept "
        "when the mass before it is <= p, one token too many when the more likely ones hold "
        "exactly p.",
    ),
    BlindCase(
        CHECK,
        "cumsum_below_p_top_forced",
        top_p_cumsum_top_forced,
        "mistake",
        "I keep the tokens whose cumulative sum including themselves is < p and force the top "
        "token in so no row is empty; the token that crosses p is still dropped.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold_keeps_ties",
        top_p_probability_threshold,
        "mistake",
        "I find how many tokens are needed, then keep every token whose probability is at "
        "least that of the last one, so tokens tied with it are all kept.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending_sort,
        "mistake",
        "I sorted without descending=True, so the nucleus is built from the least likely tokens.",
    ),
    BlindCase(
        CHECK,
        "zero_instead_of_minus_inf",
        top_p_zero_fill,
        "mistake",
        "I set the logits outside the nucleus to 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probabilities,
        "mistake",
        "I return the probabilities with zeros outside the nucleus instead of the logits "
        "with -inf.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_order_returned,
        "mistake",
        "I mask the sorted logits and return them in sorted order, not the vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted_logits",
        top_p_sorted_mask_on_unsorted,
        "mistake",
        "I lay the mask computed in sorted order directly on the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "cumsum_over_dim_0",
        top_p_cumsum_dim0,
        "mistake",
        "I wrote cumsum(0) as for a single row of logits; with a batch (B, V) it sums down the "
        "batch instead of along the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "input_changed_in_place",
        top_p_in_place,
        "mistake",
        "I write -inf into the caller's logits (logits[mask] = -inf) and return them.",
    ),
    BlindCase(
        CHECK,
        "renormalized_log_probs",
        top_p_renormalized_log_probs,
        "mistake",
        "I renormalize the kept probabilities and return their logs instead of the kept "
        "logits unchanged.",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse_permutation",
        top_p_argsort_gather,
        "correct",
        "argsort of the logits, exclusive cumulative sum built with torch.cat, the mask put "
        "back through the inverse permutation order.argsort().",
    ),
    BlindCase(
        CHECK,
        "python_row_loop",
        top_p_row_loop,
        "correct",
        "Leading dimensions flattened, then per row a Python loop that adds tokens in order "
        "until the total reaches p.",
    ),
    BlindCase(
        CHECK,
        "remove_mask_with_min_tokens",
        top_p_remove_mask,
        "correct",
        "A removal mask (mass before >= p) scattered back, p = 1 short-cut returning a clone, "
        "and an extra min_tokens=1 argument.",
    ),
]
