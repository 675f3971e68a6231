"""Blind set B25, check_top_p (chapter 18): nucleus filtering of next-token logits as readers
write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_roll_cumsum(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    cum = probs.cumsum(dim=-1)
    before = torch.roll(cum, 1, dims=-1)  # shift by one: the mass before each token
    keep_sorted = before < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_gather_back(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    kept = keep_sorted.gather(-1, order)  # back to the vocabulary's order
    return logits.masked_fill(~kept, float("-inf"))


def top_p_no_softmax(logits: Tensor, p: float) -> Tensor:
    values, order = logits.sort(dim=-1, descending=True)
    before = values.cumsum(dim=-1) - values  # the running total of the scores
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_relative_to_best(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(dim=-1)
    best = probs.max(dim=-1, keepdim=True).values
    return logits.masked_fill(probs < (1 - p) * best, float("-inf"))  # close enough to the best


def top_p_as_top_k(logits: Tensor, p: float) -> Tensor:
    V = logits.shape[-1]
    k = max(1, math.ceil(p * V))  # keep the top p share of the vocabulary
    threshold = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < threshold, float("-inf"))


def top_p_renormalised(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    filtered = logits.masked_fill(~kept, float("-inf"))
    return filtered.log_softmax(dim=-1)  # renormalise over the nucleus


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~kept] = float("-inf")
    return logits


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    return logits.masked_fill(~keep_sorted, float("-inf"))


def top_p_softmax_first_axis(logits: Tensor, p: float) -> Tensor:
    probs = F.softmax(logits, dim=0)  # the probabilities
    probs, order = probs.sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_min_prob_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(dim=-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    count = (before < p).sum(dim=-1, keepdim=True)  # tokens in the nucleus
    smallest = sorted_probs.gather(-1, count - 1)  # the least likely token kept
    return logits.masked_fill(probs < smallest, float("-inf"))


def top_p_neg_large(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, -1e4)  # a big negative number is as good as -inf


def top_p_crossing_dropped(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) <= p
    keep_sorted[..., 0] = True  # never an empty row
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_float32(logits: Tensor, p: float) -> Tensor:
    x = logits.float()
    probs, order = x.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return x.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_inverse_permutation(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.sort(F.softmax(logits, dim=-1), dim=-1, descending=True)
    before = F.pad(probs.cumsum(dim=-1)[..., :-1], (1, 0))  # exclusive cumsum
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    inverse = order.argsort(dim=-1)
    kept = keep_sorted.gather(-1, inverse)
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs = flat[r].softmax(dim=-1)
        sorted_probs, order = probs.sort(descending=True)
        mass = 0.0
        for prob, token in zip(sorted_probs.tolist(), order.tolist(), strict=True):
            out[r, token] = flat[r, token]
            mass += prob
            if mass >= p:
                break
    return out.reshape(logits.shape)


def top_p_cumsum_shift_clone(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    """An optional ``min_keep`` with a default that changes nothing."""
    sorted_probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    remove_sorted = before >= p
    remove_sorted[..., :min_keep] = False
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    out = logits.clone()
    out[remove] = float("-inf")
    return out


CASES = [
    BlindCase(
        CHECK,
        "roll_for_exclusive_cumsum",
        top_p_roll_cumsum,
        "mistake",
        "I shifted the cumulative sum with torch.roll to get the mass before each token, so the "
        "first token gets the total mass of the row and is dropped.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_back,
        "mistake",
        "To bring the sorted mask back to the vocabulary's order I used gather with the sort "
        "indices instead of scatter.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_no_softmax,
        "mistake",
        "I sorted and summed the logits themselves, without taking the softmax first.",
    ),
    BlindCase(
        CHECK,
        "relative_to_best_token",
        top_p_relative_to_best,
        "mistake",
        "I kept every token whose probability is at least (1 - p) times the best token's, "
        "without sorting or summing.",
    ),
    BlindCase(
        CHECK,
        "share_of_vocabulary",
        top_p_as_top_k,
        "mistake",
        "I kept the top ceil(p * V) tokens, a fixed share of the vocabulary, as in top-k.",
    ),
    BlindCase(
        CHECK,
        "renormalised_log_probs",
        top_p_renormalised,
        "mistake",
        "After filtering I returned log_softmax of the result so that the nucleus sums to one, "
        "instead of the kept logits unchanged.",
    ),
    BlindCase(
        CHECK,
        "in_place_on_input",
        top_p_in_place,
        "mistake",
        "I wrote -inf into the caller's logits with boolean indexing and returned them.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted_logits",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I laid the mask computed in sorted order straight onto the logits, without undoing "
        "the sort.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        top_p_softmax_first_axis,
        "mistake",
        "I took the softmax over dim=0, which is the vocabulary for one row but the batch for "
        "a batch of rows.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_min_prob_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that "
        "likely, so tokens tied with it all stay.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e4",
        top_p_neg_large,
        "mistake",
        "I gave the filtered tokens the logit -1e4 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "crossing_token_dropped",
        top_p_crossing_dropped,
        "mistake",
        "I kept the tokens whose cumulative sum (with themselves) is at most p, and forced the "
        "first one, so the token that crosses p is lost.",
    ),
    BlindCase(
        CHECK,
        "float32_result",
        top_p_float32,
        "mistake",
        "I cast the logits to float32 first, so float64 logits come back as float32 and "
        "slightly changed.",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse",
        top_p_inverse_permutation,
        "correct",
        "Exclusive cumsum with F.pad, the mask brought back with the inverse permutation "
        "(argsort of the order) and gather, torch.where for the fill.",
    ),
    BlindCase(
        CHECK,
        "loop_over_rows",
        top_p_row_loop,
        "correct",
        "A Python loop over the rows: add tokens in sorted order until the mass reaches p.",
    ),
    BlindCase(
        CHECK,
        "remove_mask_with_min_keep",
        top_p_cumsum_shift_clone,
        "correct",
        "Sort the probabilities, compute which to remove, scatter the removal mask back, fill a clone; "
        "an extra min_keep=1 argument.",
    ),
]
