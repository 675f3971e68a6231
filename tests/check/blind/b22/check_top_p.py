"""Blind set B22, check_top_p (chapter 18): the nucleus filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) <= p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_less_equal(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_shift_without_first(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum > p
    remove[..., 1:] = remove[..., :-1].clone()  # shift right: keep the token that crosses p
    kept = ~torch.zeros_like(remove).scatter(-1, order, remove)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n = (before < p).sum(-1, keepdim=True).clamp(min=1)  # tokens needed
    threshold = sorted_probs.gather(-1, n - 1)
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1)
    before = probs.cumsum(-1) - probs
    keep = before < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits * kept  # zero outside the nucleus


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    keep = sorted_probs.cumsum(-1) - sorted_probs < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return probs.masked_fill(~kept, 0.0)


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~keep, float("-inf"))


def top_p_gather_inverse(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    kept = keep.gather(-1, order)  # back to the vocabulary's order
    return logits.masked_fill(~kept, float("-inf"))


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.softmax(logits, dim=0).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    logits[~kept] = float("-inf")
    return logits


def top_p_cumsum_of_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    before = sorted_logits.cumsum(-1) - sorted_logits  # forgot the softmax
    keep = before < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_argsort_inverse(logits: Tensor, p: float) -> Tensor:
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    keep_sorted = (torch.cumsum(sorted_probs, dim=-1) - sorted_probs) < p
    keep_sorted[..., :1] = True
    inverse = order.argsort(dim=-1)  # where each token went
    kept = keep_sorted.gather(-1, inverse)
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for i, row in enumerate(flat):
        probs, order = row.softmax(-1).sort(descending=True)
        before = probs.cumsum(0) - probs
        n = max(1, int((before < p).sum()))
        out[i, order[:n]] = row[order[:n]]
    return out.view_as(logits)


def top_p_scatter_clone(logits: Tensor, p: float) -> Tensor:
    sorted_probs, sorted_idx = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    drop_sorted = sorted_probs.cumsum(dim=-1) - sorted_probs >= p
    drop_sorted[..., 0] = False
    drop = drop_sorted.scatter(-1, sorted_idx, drop_sorted)
    out = logits.clone()
    out[drop] = -float("inf")
    return out


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum, themselves included, is <= p, so the token "
        "that crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        top_p_less_equal,
        "mistake",
        "I kept a token when the mass before it is <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "shift_without_first",
        top_p_shift_without_first,
        "mistake",
        "The remove-and-shift-right version, but I left out the line that always keeps the "
        "first token.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least that "
        "likely.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted without descending=True, so the nucleus starts from the least likely tokens.",
    ),
    BlindCase(
        CHECK,
        "zero_fill",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the mask: the others get 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I return the probabilities with zeros outside the nucleus, not logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_output",
        top_p_sorted_output,
        "mistake",
        "I filtered the sorted logits and returned them in sorted order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_on_unsorted,
        "mistake",
        "I applied the mask computed in sorted order directly to the original logits.",
    ),
    BlindCase(
        CHECK,
        "gather_as_inverse",
        top_p_gather_inverse,
        "mistake",
        "I mapped the sorted mask back with gather(-1, order), which is not the inverse "
        "permutation.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        top_p_softmax_dim0,
        "mistake",
        "I wrote softmax(logits, dim=0), fine for one row but over the batch for several.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I set the removed logits to -inf in the input tensor and returned it.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_cumsum_of_logits,
        "mistake",
        "I sorted the logits and took their cumulative sum, forgetting the softmax.",
    ),
    BlindCase(
        CHECK,
        "argsort_inverse_where",
        top_p_argsort_inverse,
        "correct",
        "The inverse permutation from argsort and gather, then torch.where.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        top_p_row_loop,
        "correct",
        "A Python loop over the flattened rows: count the tokens needed, copy those logits "
        "into a -inf tensor.",
    ),
    BlindCase(
        CHECK,
        "drop_mask_on_clone",
        top_p_scatter_clone,
        "correct",
        "A mask of the tokens to drop (mass before >= p), scattered back, applied to a clone.",
    ),
]
