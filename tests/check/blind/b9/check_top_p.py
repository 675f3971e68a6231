"""Blind set B9, check_top_p (chapter 18): nucleus filters as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _scatter_back(keep_sorted: Tensor, order: Tensor) -> Tensor:
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p  # the mass up to and including the token
    keep[..., 0] = True
    return logits.masked_fill(~_scatter_back(keep, order), float("-inf"))


def top_p_shift_right(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum > p
    remove[..., 1:] = remove[..., :-1].clone()  # shift right to keep the crossing token
    remove[..., 0] = False
    return logits.masked_fill(_scatter_back(remove, order), float("-inf"))


def top_p_empty_row(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p  # no guarantee for the most likely token
    return logits.masked_fill(~_scatter_back(keep, order), float("-inf"))


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens are needed
    threshold = sorted_probs.gather(-1, n_keep - 1)  # probability of the last one needed
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # ascending: least likely first
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~_scatter_back(keep, order), float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits * _scatter_back(keep, order)  # zero outside the nucleus


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs_unsorted = logits.softmax(-1)
    probs, order = probs_unsorted.sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    filtered = probs_unsorted.masked_fill(~_scatter_back(keep, order), 0.0)
    return filtered / filtered.sum(-1, keepdim=True)  # renormalized, ready to sample


def top_p_sorted_mask_unsorted_logits(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~keep, float("-inf"))  # mask in sorted order on unsorted logits


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_flattened_batch(logits: Tensor, p: float) -> Tensor:
    shape = logits.shape
    flat = logits.reshape(-1)  # one distribution over everything
    probs, order = flat.softmax(-1).sort(descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[0] = True
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return flat.masked_fill(~kept, float("-inf")).view(shape)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    logits[~_scatter_back(keep, order)] = float("-inf")
    return logits


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.softmax(logits, dim=0).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = True
    return logits.masked_fill(~_scatter_back(keep, order), float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_loop_rows(logits: Tensor, p: float) -> Tensor:
    out = logits.clone()
    rows = out.view(-1, out.shape[-1])
    for row in rows:
        probs = row.softmax(-1)
        order = probs.argsort(descending=True)
        mass = 0.0
        drop = []
        for i, idx in enumerate(order.tolist()):
            if i > 0 and mass >= p:
                drop.append(idx)
            mass += float(probs[idx])
        row[drop] = float("-inf")
    return out


def top_p_gather_inverse(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    before = torch.cat([torch.zeros_like(probs[..., :1]), probs.cumsum(-1)[..., :-1]], dim=-1)
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    inverse = order.argsort(dim=-1)
    kept = keep_sorted.gather(-1, inverse)
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def top_p_cumsum_exclusive_float64(logits: Tensor, p: float) -> Tensor:
    probs = logits.double().softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    keep_sorted = (before < p) | (torch.arange(probs.shape[-1]) == 0)
    kept = torch.empty_like(keep_sorted).scatter_(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I keep tokens whose cumulative sum including themselves is <= p, so the token that "
        "crosses p is dropped",
    ),
    BlindCase(
        CHECK,
        "shift_right_gt",
        top_p_shift_right,
        "mistake",
        "the old Hugging Face recipe: remove cumsum > p shifted right by one, which keeps one "
        "token too many when the more likely tokens hold exactly p",
    ),
    BlindCase(
        CHECK,
        "empty_row",
        top_p_empty_row,
        "mistake",
        "keep = cumsum < p (mass including the token) and nothing forces the first token: "
        "the token crossing p is dropped, and a row whose top token alone exceeds p is all -inf",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_threshold,
        "mistake",
        "I find the probability of the last token needed and keep every token at least that "
        "likely, so ties with it are all kept",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I forgot descending=True in sort, so the least likely tokens are kept",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        top_p_zero_fill,
        "mistake",
        "I multiply the logits by the keep mask: 0 instead of -inf outside the nucleus",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I return the renormalized probabilities of the kept tokens instead of logits",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_sorted_mask_unsorted_logits,
        "mistake",
        "I compute the keep mask in sorted order and apply it to the unsorted logits without "
        "scattering it back",
    ),
    BlindCase(
        CHECK,
        "sorted_output",
        top_p_sorted_output,
        "mistake",
        "I return the filtered logits in sorted order, not in the vocabulary's order",
    ),
    BlindCase(
        CHECK,
        "flattened_batch",
        top_p_flattened_batch,
        "mistake",
        "I flatten the logits to one vector before the softmax, so the rows of a batch are "
        "mixed (right for a single row)",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "logits[~kept] = -inf writes into the caller's tensor",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        top_p_softmax_dim0,
        "mistake",
        "torch.softmax(logits, dim=0): the probabilities are over the batch axis (for 1-D "
        "input this is right)",
    ),
    BlindCase(
        CHECK,
        "loop_rows",
        top_p_loop_rows,
        "correct",
        "a Python loop over the rows and over the tokens in order of decreasing probability",
    ),
    BlindCase(
        CHECK,
        "gather_inverse_permutation",
        top_p_gather_inverse,
        "correct",
        "exclusive cumsum with a zero column, then gather with the inverse permutation "
        "(argsort of the order) and torch.where",
    ),
    BlindCase(
        CHECK,
        "float64_exclusive",
        top_p_cumsum_exclusive_float64,
        "correct",
        "softmax in float64, exclusive cumsum, scatter_ into an empty tensor",
    ),
]
