"""Blind set B29, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p  # the tokens inside the nucleus
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_rows_share_count(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    n = int((before < p).sum(-1).max())  # how many tokens the nucleus needs
    kept = torch.zeros_like(logits, dtype=torch.bool)
    kept.scatter_(-1, order[..., :n], True)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=0).sort(dim=-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_cumsum_of_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    before = sorted_logits.cumsum(-1) - sorted_logits  # forgot the softmax
    keep_sorted = before < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_tail_mass(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before < 1 - p  # cut away the tail that holds p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_index_with_order(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = keep_sorted.gather(-1, order)  # back to the vocabulary's order
    return logits.masked_fill(~kept, float("-inf"))


def top_p_renormalized(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    keep_sorted = sorted_probs.cumsum(-1) - sorted_probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    nucleus = probs.masked_fill(~kept, 0.0)
    return (nucleus / nucleus.sum(-1, keepdim=True)).log()  # the renormalized distribution


def top_p_sorted_returned(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # sort() puts the smallest first
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * kept  # switch the others off


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~kept] = float("-inf")
    return logits


def top_p_flattened(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)  # one list of numbers, then back to the shape
    probs, order = flat.softmax(-1).sort(descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def top_p_prob_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    needed = (sorted_probs.cumsum(-1) - sorted_probs < p).sum(-1, keepdim=True)
    smallest = sorted_probs.gather(-1, needed - 1)  # the least likely token in the nucleus
    return logits.masked_fill(probs < smallest, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_inverse_permutation(logits: Tensor, p: float) -> Tensor:
    """The sorted mask brought back with gather and the inverse permutation argsort(order)."""
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    mass_before = torch.cumsum(probs, dim=-1) - probs
    keep_sorted = mass_before < p
    keep_sorted[..., :1] = True
    keep = keep_sorted.gather(-1, order.argsort(dim=-1))
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """A Python loop over the rows of a (N, V) view."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for i, row in enumerate(flat):
        probs, order = row.softmax(0).sort(descending=True)
        before = probs.cumsum(0) - probs
        n = max(1, int((before < p).sum()))
        out[i, order[:n]] = row[order[:n]]
    return out.view_as(logits)


def top_p_removal_mask(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    """A mask of the tokens to remove, scattered into a boolean tensor; min_keep as an extra
    argument with a default."""
    sorted_probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    remove_sorted = (sorted_probs.cumsum(dim=-1) - sorted_probs) >= p
    remove_sorted[..., :min_keep] = False
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, -torch.inf)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum, the token included, is below p, so the token "
        "that crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "one_count_for_all_rows",
        top_p_rows_share_count,
        "mistake",
        "I computed how many tokens the nucleus needs and kept that many, taking the largest "
        "count over the batch for every row.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_dim0",
        top_p_softmax_dim0,
        "mistake",
        "I wrote softmax(dim=0), which is right for one row of logits but normalizes across the "
        "batch for (B, V).",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_cumsum_of_logits,
        "mistake",
        "I sorted and summed the logits themselves, forgetting the softmax.",
    ),
    BlindCase(
        CHECK,
        "p_as_tail_mass",
        top_p_tail_mass,
        "mistake",
        "I read p as the mass of the unlikely tail to cut away and kept the tokens before 1 - p.",
    ),
    BlindCase(
        CHECK,
        "gather_with_order",
        top_p_index_with_order,
        "mistake",
        "I brought the sorted mask back with gather(-1, order), which is the permutation, not "
        "its inverse.",
    ),
    BlindCase(
        CHECK,
        "renormalized_log_probs",
        top_p_renormalized,
        "mistake",
        "I returned the log of the renormalized nucleus probabilities instead of the original "
        "logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_returned,
        "mistake",
        "I filtered the sorted logits and returned them sorted, not in the vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I called sort() without descending=True, so the nucleus starts from the least likely "
        "token.",
    ),
    BlindCase(
        CHECK,
        "multiplied_by_mask",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the boolean mask, which gives 0 outside the nucleus, not -inf.",
    ),
    BlindCase(
        CHECK,
        "input_changed_in_place",
        top_p_in_place,
        "mistake",
        "I set logits[~kept] = -inf on the caller's tensor and returned it.",
    ),
    BlindCase(
        CHECK,
        "batch_flattened",
        top_p_flattened,
        "mistake",
        "I flattened the logits to one row, filtered, and reshaped, so the rows of a batch "
        "share one nucleus.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_prob_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that "
        "likely, so ties with it are all kept.",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation",
        top_p_inverse_permutation,
        "correct",
        "The sorted mask brought back with gather and argsort(order); torch.where for the fill.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        top_p_row_loop,
        "correct",
        "A loop over the rows of a (N, V) view, each keeping its first n sorted tokens.",
    ),
    BlindCase(
        CHECK,
        "removal_mask_min_keep",
        top_p_removal_mask,
        "correct",
        "A mask of the tokens to remove, scattered back; min_keep an extra argument with a "
        "default of 1.",
    ),
]
