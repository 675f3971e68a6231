"""Blind set B33, check_top_p (chapter 18): the nucleus filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p  # keep while the running total is below p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before <= p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_shift_forgot_first(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum >= p
    remove[..., 1:] = remove[..., :-1].clone()  # shift right: keep the token that crosses p
    sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))
    return torch.empty_like(logits).scatter(-1, order, sorted_logits)


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * keep  # zero out the tokens outside the nucleus


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    all_probs = logits.softmax(-1)
    probs, order = all_probs.sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    filtered = all_probs.masked_fill(~keep, 0.0)
    return filtered / filtered.sum(-1, keepdim=True)  # ready for torch.multinomial


def top_p_log_renormalized(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    log_probs = logits.log_softmax(-1).masked_fill(~keep, float("-inf"))
    return log_probs - log_probs.logsumexp(-1, keepdim=True)  # renormalize the nucleus


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = (probs.cumsum(-1) - probs) < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_mask_not_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    return logits.masked_fill(~keep, float("-inf"))


def top_p_gather_to_unsort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = keep_sorted.gather(-1, order)  # back to the vocabulary order
    return logits.masked_fill(~keep, float("-inf"))


def top_p_flattened_batch(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)
    probs, order = flat.softmax(-1).sort(descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep.view_as(logits), float("-inf"))


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.softmax(logits, dim=0).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~keep] = float("-inf")
    return logits


def top_p_no_softmax(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    before = sorted_logits.cumsum(-1) - sorted_logits
    keep_sorted = before < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_argsort_inverse(logits: Tensor, p: float) -> Tensor:
    order = logits.argsort(dim=-1, descending=True)
    probs = torch.softmax(logits, dim=-1).gather(-1, order)
    mass_before = torch.cat(
        [torch.zeros_like(probs[..., :1]), probs.cumsum(-1)[..., :-1]], dim=-1
    )  # exclusive cumulative sum
    keep_sorted = mass_before < p
    keep_sorted[..., 0] = True
    inverse = order.argsort(dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_python_loop(logits: Tensor, p: float) -> Tensor:
    out = logits.clone()
    rows = out.view(-1, out.shape[-1])
    probs_rows = logits.reshape(-1, logits.shape[-1]).softmax(-1)
    for row, probs in zip(rows, probs_rows):
        ranked = sorted(range(len(probs)), key=lambda i: -probs[i].item())
        total = 0.0
        kept = set()
        for i in ranked:
            if kept and total >= p:
                break
            kept.add(i)
            total += probs[i].item()
        for i in range(len(probs)):
            if i not in kept:
                row[i] = float("-inf")
    return out


def top_p_scatter_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    sorted_probs = sorted_logits.softmax(dim=-1)
    remove = sorted_probs.cumsum(dim=-1) - sorted_probs >= p
    remove[..., 0] = False
    sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))
    return torch.empty_like(logits).scatter_(-1, order, sorted_logits)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token_lt_p",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative probability (their own included) is below p.",
    ),
    BlindCase(
        CHECK,
        "mass_before_le_p",
        top_p_before_le,
        "mistake",
        "I kept a token when the mass before it is <= p.",
    ),
    BlindCase(
        CHECK,
        "shift_right_first_not_reset",
        top_p_shift_forgot_first,
        "mistake",
        "I marked cum >= p for removal and shifted the mask right by one, but did not set the "
        "first entry back to False.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I found the probability of the last token the nucleus needs and kept every token at "
        "least that likely.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted with the default order (ascending) before the cumulative sum.",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the keep mask, so the other tokens get logit 0.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the renormalized probabilities of the nucleus (0 elsewhere), ready to "
        "sample from.",
    ),
    BlindCase(
        CHECK,
        "renormalized_log_probs",
        top_p_log_renormalized,
        "mistake",
        "I returned the log-probabilities renormalized over the kept tokens instead of the "
        "original logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_output,
        "mistake",
        "I returned the sorted logits with the tail set to -inf, without putting them back in "
        "vocabulary order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_mask_not_unsorted,
        "mistake",
        "I computed the keep mask on the sorted probabilities and applied it straight to the "
        "original logits.",
    ),
    BlindCase(
        CHECK,
        "gather_to_unsort",
        top_p_gather_to_unsort,
        "mistake",
        "I used keep_sorted.gather(-1, order) to undo the sort, instead of a scatter.",
    ),
    BlindCase(
        CHECK,
        "whole_batch_flattened",
        top_p_flattened_batch,
        "mistake",
        "I flattened the logits to one vector to sort them, so a batch is one distribution.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        top_p_softmax_dim0,
        "mistake",
        "I wrote torch.softmax(logits, dim=0).",
    ),
    BlindCase(
        CHECK,
        "in_place_fill",
        top_p_in_place,
        "mistake",
        "I set logits[~keep] = -inf on the input tensor and returned it.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_no_softmax,
        "mistake",
        "I sorted the logits and summed them directly, without a softmax first.",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse_permutation",
        top_p_argsort_inverse,
        "correct",
        "argsort, an exclusive cumsum built with torch.cat, and the inverse permutation "
        "(argsort of the order) to go back; torch.where for the -inf.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        top_p_python_loop,
        "correct",
        "A loop over the rows: add tokens from the most likely down until the total reaches p.",
    ),
    BlindCase(
        CHECK,
        "scatter_filtered_logits",
        top_p_scatter_logits,
        "correct",
        "Sort the logits, set the removed ones to -inf in sorted order, then scatter the sorted "
        "logits back to their places.",
    ),
]
