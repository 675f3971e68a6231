"""Blind set B13, check_top_p (chapter 18): nucleus filters as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def topp_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) <= p  # the tokens up to p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def topp_le_before(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs <= p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def topp_threshold_prob(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens I need
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, float("-inf"))


def topp_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def topp_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * keep  # the dropped tokens become 0


def topp_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    keep_sorted = sorted_probs.cumsum(-1) - sorted_probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return probs.masked_fill(~keep, 0.0)


def topp_sorted_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep_sorted, float("-inf"))  # forgot to map back


def topp_returns_sorted_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def topp_rows_mixed(logits: Tensor, p: float) -> Tensor:
    shape = logits.shape
    flat = logits.softmax(-1).reshape(-1)  # sort everything at once
    probs, order = flat.sort(descending=True)
    keep_sorted = probs.cumsum(0) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted)
    return logits.masked_fill(~keep.reshape(shape), float("-inf"))


def topp_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~keep] = float("-inf")
    return logits


def topp_cumsum_of_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    keep_sorted = cum < p  # keep while under p; the first token is always under 1
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


# ---------------------------------------------------------------- correct variants


def topp_gather_inverse(logits: Tensor, p: float) -> Tensor:
    """The sorted mask brought back with gather and the inverse permutation."""
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    before = torch.cumsum(probs, dim=-1) - probs
    keep_sorted = (before < p) | (torch.arange(probs.shape[-1]) == 0)
    inverse = order.argsort(dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def topp_flat_rows(logits: Tensor, p: float) -> Tensor:
    """The batch flattened to 2-D rows, the mask kept as a float and compared with 0.5."""
    V = logits.shape[-1]
    flat = logits.reshape(-1, V)
    probs, order = flat.softmax(dim=1).sort(dim=1, descending=True)
    before = probs.cumsum(dim=1) - probs
    keep_sorted = (before < p).to(flat.dtype)
    keep_sorted[:, 0] = 1.0
    keep = torch.zeros_like(flat).scatter_(1, order, keep_sorted)
    out = flat.masked_fill(keep < 0.5, float("-inf"))
    return out.reshape(logits.shape)


def topp_sorted_logits_scatter(logits: Tensor, p: float) -> Tensor:
    """The sorted logits filled, then scattered back to the vocabulary's order."""
    sorted_logits, idx = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    drop = (probs.cumsum(-1) - probs) >= p
    drop[..., 0] = False
    sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.empty_like(logits).scatter_(-1, idx, sorted_logits)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        topp_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative probability is <= p, so the one crossing p goes.",
    ),
    BlindCase(
        CHECK,
        "le_instead_of_lt",
        topp_le_before,
        "mistake",
        "I kept a token when the mass before it is <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        topp_threshold_prob,
        "mistake",
        "I found the probability of the last token needed and kept every token >= it.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        topp_ascending,
        "mistake",
        "I sorted ascending, so the cumulative sum starts at the least likely token.",
    ),
    BlindCase(
        CHECK,
        "zero_fill",
        topp_zero_fill,
        "mistake",
        "I multiplied the logits by the mask, so dropped tokens get 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        topp_returns_probs,
        "mistake",
        "I returned the filtered probabilities instead of the logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        topp_sorted_mask_on_unsorted,
        "mistake",
        "I applied the mask computed in sorted order directly to the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_logits_returned",
        topp_returns_sorted_logits,
        "mistake",
        "I returned the filtered logits in sorted order, not the vocabulary's order.",
    ),
    BlindCase(
        CHECK,
        "rows_mixed",
        topp_rows_mixed,
        "mistake",
        "I flattened the batch and sorted all probabilities together.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        topp_in_place,
        "mistake",
        "I wrote -inf into the caller's logits in place and returned them.",
    ),
    BlindCase(
        CHECK,
        "cumsum_strict_with_token",
        topp_cumsum_of_logits,
        "mistake",
        "I kept the tokens while the cumulative sum including them is < p.",
    ),
    BlindCase(
        CHECK,
        "gather_inverse",
        topp_gather_inverse,
        "correct",
        "Top token kept by an arange test, mask brought back by gather with argsort of the order.",
    ),
    BlindCase(
        CHECK,
        "flat_rows_float_mask",
        topp_flat_rows,
        "correct",
        "The batch reshaped to 2-D rows, with a float mask compared with 0.5.",
    ),
    BlindCase(
        CHECK,
        "scatter_sorted_logits",
        topp_sorted_logits_scatter,
        "correct",
        "I filled the sorted logits and scattered them back to the vocabulary order.",
    ),
]
