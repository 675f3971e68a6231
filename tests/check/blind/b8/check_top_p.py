"""Blind set B8, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) <= p  # includes the token itself: the crossing one is lost
    keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_searchsorted_right(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    cum = probs.cumsum(-1)
    target = torch.full((*cum.shape[:-1], 1), p, dtype=cum.dtype)
    # first place where the cumulative sum passes p; side="right" also passes an exact p
    n_keep = torch.searchsorted(cum.contiguous(), target, right=True) + 1
    ranks = torch.arange(cum.shape[-1]).expand_as(cum)
    keep_sorted = ranks < n_keep
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # forgot descending=True
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * keep  # zeroed the dropped logits


def top_p_mask_not_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep_sorted, float("-inf"))  # the sorted mask on the raw order


def top_p_threshold_ties(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    needed = (sorted_probs.cumsum(-1) - sorted_probs < p).sum(-1, keepdim=True)
    threshold = sorted_probs.gather(-1, needed - 1)  # the smallest probability needed
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_softmax_over_batch(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(dim=0)  # dim=0: over the rows of the batch
    sorted_probs, order = probs.sort(-1, descending=True)
    keep_sorted = sorted_probs.cumsum(-1) - sorted_probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~keep] = float("-inf")  # writes into the caller's tensor
    return logits


def top_p_on_logits(logits: Tensor, p: float) -> Tensor:
    values, order = logits.sort(-1, descending=True)
    keep_sorted = values.cumsum(-1) - values < p  # cumulative sum of logits, no softmax
    keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_returns_log_probs(logits: Tensor, p: float) -> Tensor:
    log_probs = logits.log_softmax(-1)  # I returned normalised log-probabilities
    probs, order = log_probs.exp().sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return log_probs.masked_fill(~keep, float("-inf"))


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    values, _ = logits.sort(-1, descending=True)
    probs = values.softmax(-1)
    keep_sorted = probs.cumsum(-1) - probs < p
    return values.masked_fill(~keep_sorted, float("-inf"))  # never scattered back


def top_p_keep_at_least_two(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep_sorted[..., :2] = True  # "min_tokens_to_keep = 2", to have something to sample
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_inverse_permutation(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    before = probs.cumsum(dim=-1) - probs
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    keep = keep_sorted.gather(-1, order.argsort(dim=-1))  # back to the vocabulary's order
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    out = logits.clone()
    flat = out.reshape(-1, out.shape[-1])
    for row in flat:
        probs = row.softmax(-1)
        sorted_probs, order = probs.sort(descending=True)
        before = sorted_probs.cumsum(0) - sorted_probs
        drop = order[before >= p]
        drop = drop[drop != order[0]]
        row[drop] = float("-inf")
    return flat.view_as(logits)


def top_p_float64_remove(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    if p >= 1.0:
        return logits.clone()
    probs, order = logits.double().softmax(-1).sort(-1, descending=True)
    remove_sorted = probs.cumsum(-1) - probs >= p
    remove_sorted[..., :min_keep] = False
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))


def _case(name: str, code, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "cumsum_includes_token",
        top_p_cumsum_with_token,
        "mistake",
        "I keep the tokens whose cumulative probability, the token included, is <= p, so the "
        "token that crosses p is dropped.",
    ),
    _case(
        "searchsorted_right_side",
        top_p_searchsorted_right,
        "mistake",
        "I find the cut with torch.searchsorted(cumsum, p, right=True) + 1; where the leading "
        "tokens hold exactly p it keeps one token too many.",
    ),
    _case(
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted without descending=True, so the nucleus is built from the least likely tokens.",
    ),
    _case(
        "dropped_logits_zeroed",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the keep mask: the dropped tokens get logit 0, not -inf.",
    ),
    _case(
        "sorted_mask_on_unsorted_logits",
        top_p_mask_not_unsorted,
        "mistake",
        "The keep mask, computed in sorted order, is applied directly to the logits in the "
        "vocabulary's order, without scattering it back.",
    ),
    _case(
        "probability_threshold_keeps_ties",
        top_p_threshold_ties,
        "mistake",
        "I compute the probability of the last token needed and keep every token at least that "
        "likely, so tokens tied with it are all kept.",
    ),
    _case(
        "softmax_over_batch_axis",
        top_p_softmax_over_batch,
        "mistake",
        "softmax(dim=0): on a batch the probabilities are taken across the rows, mixing the "
        "distributions.",
    ),
    _case(
        "writes_into_input",
        top_p_in_place,
        "mistake",
        "logits[~keep] = -inf on the caller's tensor; the right values come back but the input "
        "is changed.",
    ),
    _case(
        "cumsum_of_logits",
        top_p_on_logits,
        "mistake",
        "I sorted and summed the logits themselves, without the softmax, and compared that sum "
        "with p.",
    ),
    _case(
        "returns_log_probs",
        top_p_returns_log_probs,
        "mistake",
        "I return log_softmax(logits) with -inf outside the nucleus, not the original logits; "
        "the kept values are shifted.",
    ),
    _case(
        "sorted_order_returned",
        top_p_sorted_output,
        "mistake",
        "I filter the sorted logits and return them sorted, not in the vocabulary's order.",
    ),
    _case(
        "at_least_two_tokens",
        top_p_keep_at_least_two,
        "mistake",
        "I always keep the two most likely tokens (min_tokens_to_keep = 2), which is wrong when "
        "one token alone holds p.",
    ),
    _case(
        "inverse_permutation_gather",
        top_p_inverse_permutation,
        "correct",
        "The sorted mask put back with gather over order.argsort() and torch.where for the -inf.",
    ),
    _case(
        "python_loop_over_rows",
        top_p_row_loop,
        "correct",
        "A loop over the flattened rows of a clone, dropping the tokens whose predecessors hold "
        "at least p except the first.",
    ),
    _case(
        "float64_remove_mask",
        top_p_float64_remove,
        "correct",
        "Probabilities in float64, a 'remove' mask scattered back, a min_keep=1 argument, and "
        "p >= 1 returned as a copy.",
    ),
]
