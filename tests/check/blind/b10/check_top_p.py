"""Blind set B10, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"
NEG_INF = float("-inf")


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p  # the mass *with* the token: the crossing one is lost
    keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, NEG_INF)


def top_p_le_before(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before <= p  # <= instead of <
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, NEG_INF)


def top_p_can_be_empty(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.sort(F.softmax(logits, dim=-1), dim=-1, descending=True)
    keep_sorted = torch.cumsum(probs, dim=-1) <= p  # "stay within p", first token not forced
    keep = keep_sorted.scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, NEG_INF)


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, NEG_INF)  # ties with it are kept as well


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1)  # forgot descending=True
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, NEG_INF)


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * keep  # the dropped tokens get logit 0


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep_sorted = sorted_probs.cumsum(-1) - sorted_probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    filtered = probs * keep
    return filtered / filtered.sum(-1, keepdim=True)  # ready to sample from


def top_p_sorted_order(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, NEG_INF)  # never put back in vocabulary order


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p  # a mask in sorted order ...
    return logits.masked_fill(~keep, NEG_INF)  # ... laid on the logits in vocabulary order


def top_p_gather_unsort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = keep_sorted.gather(-1, order)  # gather with the sort order is not its inverse
    return logits.masked_fill(~keep, NEG_INF)


def top_p_flattened(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)  # written for one distribution, then used on a batch
    probs, order = flat.softmax(-1).sort(descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted)
    return flat.masked_fill(~keep, NEG_INF).view_as(logits)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~keep] = NEG_INF  # written into the caller's tensor
    return logits


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = F.softmax(logits, dim=0).sort(dim=-1, descending=True)  # dim=0
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, NEG_INF)


# ---------------------------------------------------------------- correct variants


def top_p_argsort_gather(logits: Tensor, p: float) -> Tensor:
    """The sorted mask unsorted with the inverse permutation (argsort of the order) and
    gather instead of scatter; torch.where for the fill."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs  # mass of the likelier tokens
    keep_sorted = before < p
    inverse = torch.argsort(order, dim=-1)
    keep = torch.gather(keep_sorted, -1, inverse)
    return torch.where(keep, logits, torch.full_like(logits, NEG_INF))


def top_p_rows_loop(logits: Tensor, p: float) -> Tensor:
    """One row at a time in a Python loop over the flattened leading dimensions, each row's
    tokens visited in order of probability; a clone of the input is filled."""
    out = logits.clone()
    rows = out.view(-1, out.shape[-1])
    for row in rows:
        probs, idx = row.softmax(0).sort(descending=True)
        before = (probs.cumsum(0) - probs).tolist()  # mass of the likelier tokens
        drop = [j for j, mass in zip(idx.tolist(), before, strict=True) if mass >= p]
        if drop:
            row[drop] = NEG_INF
    return out


def top_p_remove_shifted(logits: Tensor, p: float) -> Tensor:
    """As common sampling code writes it: remove = cumsum - probs >= p, on sorted logits,
    then scatter the filtered sorted logits back."""
    sorted_logits, sorted_idx = torch.sort(logits, descending=True, dim=-1)
    probs = sorted_logits.softmax(dim=-1)
    remove = (probs.cumsum(dim=-1) - probs) >= p
    filtered = sorted_logits.masked_fill(remove, NEG_INF)
    return torch.empty_like(logits).scatter_(-1, sorted_idx, filtered)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept a token when the cumulative sum including it is < p, which drops the token "
        "that crosses p.",
    ),
    BlindCase(
        CHECK,
        "le_instead_of_lt",
        top_p_le_before,
        "mistake",
        "I kept a token when the mass before it is <= p, one token too many when the more "
        "likely tokens hold exactly p.",
    ),
    BlindCase(
        CHECK,
        "row_can_be_empty",
        top_p_can_be_empty,
        "mistake",
        "I kept the tokens whose cumulative sum stays <= p and did not force the first one, so "
        "a row whose top token alone exceeds p is all -inf.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that "
        "likely, so tokens tied with it are all kept.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I forgot descending=True, so the nucleus is built from the least likely tokens.",
    ),
    BlindCase(
        CHECK,
        "zero_instead_of_minus_inf",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the mask, so dropped tokens get logit 0 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the renormalized probabilities of the nucleus instead of filtered logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_order,
        "mistake",
        "I filtered the sorted logits and returned them sorted, never back in vocabulary order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I computed the keep-mask in sorted order and applied it directly to the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_unsort,
        "mistake",
        "I mapped the sorted mask back with gather(-1, order) instead of scatter, which applies "
        "the permutation again instead of undoing it.",
    ),
    BlindCase(
        CHECK,
        "batch_flattened",
        top_p_flattened,
        "mistake",
        "I wrote it for one distribution with reshape(-1), so on a batch all rows are sorted "
        "and cut together.",
    ),
    BlindCase(
        CHECK,
        "input_changed_in_place",
        top_p_in_place,
        "mistake",
        "I wrote -inf into the logits I was given (logits[~keep] = -inf) and returned them.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        top_p_softmax_dim0,
        "mistake",
        "I took the softmax over dim=0, which for a batch normalizes across the rows.",
    ),
    BlindCase(
        CHECK,
        "argsort_gather",
        top_p_argsort_gather,
        "correct",
        "The sorted mask put back with gather and the inverse permutation (argsort of the "
        "order) instead of scatter; torch.where for the fill.",
    ),
    BlindCase(
        CHECK,
        "rows_loop",
        top_p_rows_loop,
        "correct",
        "A Python loop over the rows (any leading shape), dropping by index lists; works on a "
        "clone.",
    ),
    BlindCase(
        CHECK,
        "remove_shifted_scatter_logits",
        top_p_remove_shifted,
        "correct",
        "Marks tokens to remove (mass before >= p) on sorted logits and scatters the filtered "
        "sorted logits back into place.",
    ),
]
