"""Blind set B20, check_top_p (chapter 18): nucleus filters as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _unsort(keep_sorted: Tensor, order: Tensor) -> Tensor:
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p  # the cumulative sum with the token itself
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_cumsum_lt_first_kept(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p
    keep[..., 0] = True  # at least the most likely token
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p  # <= where < is right
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens are needed
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, float("-inf"))  # every token >= it


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # ascending by default
    before = probs.cumsum(-1) - probs
    keep = before < p
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits * _unsort(keep, order)  # zero outside the nucleus


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    out = logits.softmax(-1).masked_fill(~_unsort(keep, order), 0.0)
    return out / out.sum(-1, keepdim=True)  # renormalized probabilities


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))  # never put back in place


def top_p_sorted_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # mask of sorted places on the raw logits


def top_p_rows_flattened(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)
    probs, order = flat.softmax(-1).sort(descending=True)  # one softmax over every row
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    logits[~_unsort(keep, order)] = float("-inf")  # edited the caller's tensor
    return logits


def top_p_gather_unsort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = keep.gather(-1, order)  # gather where the inverse permutation (scatter) is needed
    return logits.masked_fill(~kept, float("-inf"))


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(0).sort(-1, descending=True)  # softmax over the batch axis
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


# ---------------------------------------------------------------- correct


def top_p_shifted_remove(logits: Tensor, p: float) -> Tensor:
    """Hugging Face's layout: a remove mask, shifted right by one, strict test."""
    sorted_logits, sorted_idx = torch.sort(logits, descending=True, dim=-1)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum >= p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    remove = remove.scatter(-1, sorted_idx, remove)
    return logits.masked_fill(remove, -float("inf"))


def top_p_loop(logits: Tensor, p: float) -> Tensor:
    """Row by row in Python."""
    out = logits.clone()
    flat = out.view(-1, logits.shape[-1])
    for row in flat:
        probs = row.softmax(-1)
        order = probs.argsort(descending=True)
        mass = 0.0
        keep = torch.zeros_like(row, dtype=torch.bool)
        for i in order.tolist():
            if mass >= p:
                break
            keep[i] = True
            mass += probs[i].item()
        row[~keep] = float("-inf")
    return out


def top_p_inverse_permutation(logits: Tensor, p: float) -> Tensor:
    """The inverse permutation by argsort of the order, then gather; probabilities via
    exp(log_softmax)."""
    probs = logits.log_softmax(dim=-1).exp()
    order = probs.argsort(dim=-1, descending=True)
    sorted_probs = probs.gather(-1, order)
    exclusive = torch.cat(
        [torch.zeros_like(sorted_probs[..., :1]), sorted_probs.cumsum(-1)[..., :-1]], dim=-1
    )
    keep_sorted = exclusive < p
    inverse = order.argsort(dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_le",
        top_p_cumsum_le,
        "mistake",
        "kept tokens whose cumulative sum (themselves included) is <= p",
    ),
    BlindCase(
        CHECK,
        "cumsum_lt_first_kept",
        top_p_cumsum_lt_first_kept,
        "mistake",
        "cumsum < p with the token itself, most likely token forced in",
    ),
    BlindCase(
        CHECK, "before_le", top_p_before_le, "mistake", "mass before the token <= p, not < p"
    ),
    BlindCase(
        CHECK,
        "threshold",
        top_p_threshold,
        "mistake",
        "kept every token at least as likely as the last one needed",
    ),
    BlindCase(CHECK, "ascending", top_p_ascending, "mistake", "sort() without descending=True"),
    BlindCase(CHECK, "zero_fill", top_p_zero_fill, "mistake", "multiplied by the mask (0)"),
    BlindCase(
        CHECK,
        "returns_probs",
        top_p_returns_probs,
        "mistake",
        "returned the renormalized probabilities of the nucleus",
    ),
    BlindCase(
        CHECK,
        "sorted_output",
        top_p_sorted_output,
        "mistake",
        "returned the filtered logits in sorted order",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_on_unsorted,
        "mistake",
        "applied the mask of the sorted places to the unsorted logits",
    ),
    BlindCase(
        CHECK,
        "rows_flattened",
        top_p_rows_flattened,
        "mistake",
        "flattened the batch and filtered all rows as one distribution",
    ),
    BlindCase(CHECK, "in_place", top_p_in_place, "mistake", "wrote -inf into the caller's logits"),
    BlindCase(
        CHECK,
        "gather_unsort",
        top_p_gather_unsort,
        "mistake",
        "put the mask back with gather(order) instead of scatter",
    ),
    BlindCase(
        CHECK, "softmax_dim0", top_p_softmax_dim0, "mistake", "softmax(0) instead of softmax(-1)"
    ),
    BlindCase(
        CHECK,
        "shifted_remove",
        top_p_shifted_remove,
        "correct",
        "a remove mask (cum >= p) shifted right by one, as in Hugging Face",
    ),
    BlindCase(CHECK, "loop", top_p_loop, "correct", "row by row, adding tokens until mass >= p"),
    BlindCase(
        CHECK,
        "inverse_permutation",
        top_p_inverse_permutation,
        "correct",
        "exclusive cumsum, inverse permutation by argsort, exp(log_softmax)",
    ),
]
