"""Blind set B28, check_top_p (chapter 18): nucleus (top-p) filtering as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _sorted(logits: Tensor) -> tuple[Tensor, Tensor]:
    return logits.softmax(dim=-1).sort(dim=-1, descending=True)


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = probs.cumsum(dim=-1) <= p  # the tokens inside the nucleus
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_roll_shift(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    before = torch.roll(probs.cumsum(dim=-1), shifts=1, dims=-1)  # the mass before each token
    keep = before < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_gather_back(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = (probs.cumsum(dim=-1) - probs) < p
    kept = keep.gather(-1, order)  # back to the vocabulary's order
    return logits.masked_fill(~kept, float("-inf"))


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(dim=-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    n_keep = ((sorted_probs.cumsum(-1) - sorted_probs) < p).sum(-1, keepdim=True)
    smallest = sorted_probs.gather(-1, n_keep - 1)  # the least likely token we need
    return logits.masked_fill(probs < smallest, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1)
    keep = (probs.cumsum(dim=-1) - probs) < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = (probs.cumsum(dim=-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits * kept  # zero outside the nucleus


def top_p_renormalised(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = (probs.cumsum(dim=-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    filtered = logits.masked_fill(~kept, float("-inf"))
    return filtered.log_softmax(dim=-1)  # the nucleus renormalised, as log-probabilities


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = _sorted(logits)
    keep = (probs.cumsum(dim=-1) - probs) < p
    return logits.masked_fill(~keep, float("-inf"))


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs = F.softmax(logits, dim=0)
    probs, order = probs.sort(descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_one_k_for_batch(logits: Tensor, p: float) -> Tensor:
    probs, _ = _sorted(logits)
    k = int(((probs.cumsum(-1) - probs) < p).sum(-1).max())  # tokens in the nucleus
    threshold = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < threshold, float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    keep = (probs.cumsum(dim=-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    logits[~kept] = float("-inf")
    return logits


def top_p_sorted_logits_returned(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(dim=-1)
    keep = (probs.cumsum(-1) - probs) < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_strictly_below(logits: Tensor, p: float) -> Tensor:
    probs, order = _sorted(logits)
    cum = probs.cumsum(dim=-1)
    keep = torch.cat([torch.ones_like(cum[..., :1], dtype=torch.bool), cum[..., :-1] < p], -1)
    keep &= probs < p  # a token that alone holds more than p is too sure of itself
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """A loop over the rows and, in each, over the tokens from the most likely down."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs, order = flat[r].softmax(-1).sort(descending=True)
        upto = probs.cumsum(0)  # the mass up to and with each token
        for j, token in enumerate(order):
            if j > 0 and upto[j] - probs[j] >= p:  # the tokens before it already hold p
                break
            out[r, token] = flat[r, token]
    return out.view_as(logits)


def top_p_exclusive_cumsum(logits: Tensor, p: float) -> Tensor:
    """The mass before each token as cumsum minus itself, mapped back with argsort; 1-D or
    batched input; torch.where instead of masked_fill."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = mass_before < p
    keep_sorted[..., 0] = True
    keep = keep_sorted.gather(-1, order.argsort(dim=-1))
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_index_put(logits: Tensor, p: float) -> Tensor:
    """A clone filled with -inf, and the kept logits written back through the sorted indices."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    keep[..., :1] = True
    out = torch.full_like(logits, -torch.inf)
    sorted_logits = logits.gather(-1, order)
    out.scatter_(-1, order, torch.where(keep, sorted_logits, out.gather(-1, order)))
    return out


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum, the token itself included, is <= p, so the "
        "token that crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "roll_to_shift_cumsum",
        top_p_roll_shift,
        "mistake",
        "I shifted the cumulative sum right with torch.roll to get the mass before each token; "
        "roll wraps the total around to the first place.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_back,
        "mistake",
        "I mapped the sorted mask back with gather(-1, order) instead of scatter.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_probability_threshold,
        "mistake",
        "I found the least likely token the nucleus needs and kept every token at least as "
        "likely as it.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted without descending=True, so the nucleus is built from the least likely tokens.",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the mask, so the dropped tokens get logit 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "renormalised_log_probs",
        top_p_renormalised,
        "mistake",
        "I returned log_softmax of the filtered logits, the renormalised nucleus, instead of "
        "the kept logits unchanged.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted_logits",
        top_p_sorted_mask_unsorted,
        "mistake",
        "I applied the mask computed in sorted order directly to the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_dim0",
        top_p_softmax_dim0,
        "mistake",
        "F.softmax(logits, dim=0): right for one row, across the batch for several.",
    ),
    BlindCase(
        CHECK,
        "one_k_for_the_batch",
        top_p_one_k_for_batch,
        "mistake",
        "I counted the nucleus size k per row and then used the largest k with topk for every row.",
    ),
    BlindCase(
        CHECK,
        "input_changed_in_place",
        top_p_in_place,
        "mistake",
        "I wrote logits[~kept] = -inf into the input and returned it.",
    ),
    BlindCase(
        CHECK,
        "sorted_logits_returned",
        top_p_sorted_logits_returned,
        "mistake",
        "I sorted the logits, filtered them, and returned them in sorted order.",
    ),
    BlindCase(
        CHECK,
        "dominant_token_dropped",
        top_p_strictly_below,
        "mistake",
        "Besides the mass before a token I also required the token's own probability to be "
        "below p, so a token that alone holds more than p is dropped and its row is empty.",
    ),
    BlindCase(
        CHECK,
        "loop_over_rows",
        top_p_row_loop,
        "correct",
        "A loop over rows and over tokens from the most likely, stopping once the tokens "
        "before hold p.",
    ),
    BlindCase(
        CHECK,
        "exclusive_cumsum_argsort",
        top_p_exclusive_cumsum,
        "correct",
        "The mass before each token, mapped back with gather by order.argsort(); torch.where "
        "for the fill.",
    ),
    BlindCase(
        CHECK,
        "scatter_into_minus_inf",
        top_p_index_put,
        "correct",
        "A tensor of -inf into which the kept logits are scattered through the sorted indices.",
    ),
]
