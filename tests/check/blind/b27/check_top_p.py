"""Blind set B27, check_top_p (chapter 18): the nucleus (top-p) filter as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _unsort(keep_sorted: Tensor, order: Tensor) -> Tensor:
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---------------------------------------------------------------- mistakes


def top_p_cum_with_token_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p  # the tokens that fit inside p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_can_be_empty(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.sort(F.softmax(logits, dim=-1), dim=-1, descending=True)
    keep = torch.cumsum(probs, dim=-1) < p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


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
    keep = before < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits * _unsort(keep, order)  # the other tokens set to zero


def top_p_returns_probabilities(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    keep = sorted_probs.cumsum(-1) - sorted_probs < p
    kept = probs * _unsort(keep, order)
    return kept / kept.sum(-1, keepdim=True)  # renormalized, ready for multinomial


def top_p_sorted_order(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))


def top_p_rows_flattened(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)
    probs, order = flat.softmax(-1).sort(descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    logits[~_unsort(keep, order)] = float("-inf")
    return logits


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(0).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_no_softmax(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    before = sorted_logits.cumsum(-1) - sorted_logits  # the mass of the more likely tokens
    keep = before < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_each_token_above_p(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    keep = probs >= p  # the tokens whose probability is at least p
    best = probs.argmax(-1, keepdim=True)
    keep = keep.scatter(-1, best, True)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_argsort_as_ranks(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    order = probs.argsort(-1, descending=True)
    sorted_probs = probs.gather(-1, order)
    keep_sorted = sorted_probs.cumsum(-1) - sorted_probs < p
    keep = keep_sorted.gather(-1, order)  # back to the vocabulary's order
    return logits.masked_fill(~keep, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_count_ranks(logits: Tensor, p: float) -> Tensor:
    """How many tokens to keep per row, counted first; then a comparison of ranks."""
    sorted_probs, order = torch.sort(logits.softmax(dim=-1), dim=-1, descending=True)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    count = (mass_before < p).sum(dim=-1, keepdim=True).clamp(min=1)  # (..., 1)
    ranks = torch.arange(logits.shape[-1], device=logits.device).expand_as(sorted_probs)
    keep = torch.empty_like(ranks, dtype=torch.bool).scatter_(-1, order, ranks < count)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """Row by row in Python: take the most likely tokens while the mass before them is
    below p."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs, order = flat[r].softmax(-1).sort(descending=True)
        before = (probs.cumsum(-1) - probs).tolist()
        for rank, idx in enumerate(order.tolist()):
            if rank > 0 and before[rank] >= p:
                break
            out[r, idx] = flat[r, idx]
    return out.view_as(logits)


def top_p_argsort_drop_mask(logits: Tensor, p: float) -> Tensor:
    """argsort and gather instead of sort; a mask of the dropped tokens; torch.where."""
    probs = torch.softmax(logits, dim=-1)
    order = torch.argsort(probs, dim=-1, descending=True)
    sorted_probs = torch.gather(probs, -1, order)
    drop_sorted = torch.cumsum(sorted_probs, -1) - sorted_probs >= p
    drop_sorted[..., 0] = False  # the most likely token always stays
    drop = torch.zeros_like(drop_sorted).scatter_(-1, order, drop_sorted)
    return torch.where(drop, torch.tensor(-torch.inf, dtype=logits.dtype), logits)


def top_p_clone_and_index(logits: Tensor, p: float) -> Tensor:
    """A clone written in place; the sorted indices of the dropped tokens set to -inf."""
    out = logits.clone()
    probs, order = torch.softmax(logits, -1).sort(-1, descending=True)
    drop_sorted = (probs.cumsum(-1) - probs) >= p
    drop_sorted[..., 0] = False
    out.scatter_(-1, order, out.gather(-1, order).masked_fill(drop_sorted, float("-inf")))
    return out


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token_le",
        top_p_cum_with_token_le,
        "mistake",
        "I keep the tokens whose cumulative sum, their own probability included, is <= p "
        "(and always the first), so the token that crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "before_le",
        top_p_before_le,
        "mistake",
        "I test the mass before each token with <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "can_be_empty",
        top_p_can_be_empty,
        "mistake",
        "I keep the tokens with cumsum < p, nothing more; a row whose top token holds more "
        "than p keeps nothing.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I find the probability of the last token needed and keep every token at least that "
        "probable.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted the probabilities without descending=True.",
    ),
    BlindCase(
        CHECK,
        "zero_fill",
        top_p_zero_fill,
        "mistake",
        "I multiply the logits by the keep mask, so the dropped tokens get logit 0.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probabilities,
        "mistake",
        "I return the renormalized probabilities of the kept tokens instead of logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order",
        top_p_sorted_order,
        "mistake",
        "I return the filtered sorted logits without putting them back in the vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I laid the mask computed in sorted order directly on the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "rows_flattened",
        top_p_rows_flattened,
        "mistake",
        "I flattened the logits to one vector to sort, so the rows of a batch are mixed.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I set the dropped logits to -inf in the input tensor itself and return it.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        top_p_softmax_dim0,
        "mistake",
        "I wrote logits.softmax(0), right for one row but over the batch for several.",
    ),
    BlindCase(
        CHECK,
        "no_softmax",
        top_p_no_softmax,
        "mistake",
        "I added up the sorted logits themselves instead of probabilities.",
    ),
    BlindCase(
        CHECK,
        "each_token_above_p",
        top_p_each_token_above_p,
        "mistake",
        "I keep the tokens whose own probability is at least p (and the most likely one).",
    ),
    BlindCase(
        CHECK,
        "argsort_as_ranks",
        top_p_argsort_as_ranks,
        "mistake",
        "I brought the mask back to the vocabulary's order with gather(order) instead of a "
        "scatter.",
    ),
    BlindCase(
        CHECK,
        "count_then_ranks",
        top_p_count_ranks,
        "correct",
        "I count per row how many tokens the nucleus needs, then compare ranks with that count.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        top_p_row_loop,
        "correct",
        "A Python loop per row that takes the most likely tokens while the mass before them is "
        "below p.",
    ),
    BlindCase(
        CHECK,
        "argsort_drop_mask",
        top_p_argsort_drop_mask,
        "correct",
        "argsort and gather instead of sort, a mask of the dropped tokens scattered back, "
        "torch.where.",
    ),
    BlindCase(
        CHECK,
        "clone_and_scatter",
        top_p_clone_and_index,
        "correct",
        "A clone of the logits, the dropped ones set to -inf in sorted order and scattered back.",
    ),
]
