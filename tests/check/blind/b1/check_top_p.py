"""Blind cases for check_top_p (chapter 18)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _sorted(logits):
    return logits.softmax(-1).sort(dim=-1, descending=True)


def _unsort(keep_sorted, order):
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def tp_cumsum_with_token(logits, p):
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) < p  # the token that crosses p is dropped
    keep[..., 0] = True
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def tp_less_equal(logits, p):
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) - probs <= p  # one token too many when the mass before is exactly p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def tp_empty_row(logits, p):
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) <= p  # nothing kept when the top token alone exceeds p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def tp_probability_threshold(logits, p):
    probs = logits.softmax(-1)
    sp, _ = probs.sort(-1, descending=True)
    n_keep = ((sp.cumsum(-1) - sp) < p).sum(-1, keepdim=True)  # (..., 1)
    threshold = sp.gather(-1, n_keep - 1)  # the probability of the last kept token
    return logits.masked_fill(probs < threshold, float("-inf"))  # ties with it kept too


def tp_ascending(logits, p):
    probs, order = logits.softmax(-1).sort(dim=-1)  # ascending
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~_unsort(keep, order), float("-inf"))


def tp_zero_fill(logits, p):
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~_unsort(keep, order), 0.0)


def tp_returns_probs(logits, p):
    probs = logits.softmax(-1)
    sp, order = probs.sort(-1, descending=True)
    keep = _unsort(sp.cumsum(-1) - sp < p, order)
    filtered = probs * keep
    return filtered / filtered.sum(-1, keepdim=True)  # renormalized probabilities


def tp_sorted_order_returned(logits, p):
    sl, order = logits.sort(-1, descending=True)
    probs = sl.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sl.masked_fill(~keep, float("-inf"))  # still in sorted order


def tp_sorted_mask_unsorted_logits(logits, p):
    probs, order = _sorted(logits)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # forgot to scatter the mask back


def tp_rows_mixed(logits, p):
    flat = logits.reshape(-1)
    probs = logits.softmax(-1).reshape(-1)
    sp, order = probs.sort(descending=True)  # sorts the whole batch together
    keep_sorted = (sp.cumsum(0) - sp) < p * (logits.numel() // logits.shape[-1])
    keep = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted)
    return flat.masked_fill(~keep, float("-inf")).view_as(logits)


def tp_in_place(logits, p):
    probs, order = _sorted(logits)
    keep = _unsort(probs.cumsum(-1) - probs < p, order)
    logits[~keep] = float("-inf")
    return logits


class TopPFilter:
    def __init__(self, p: float) -> None:
        self.p = p

    def __call__(self, logits: Tensor) -> Tensor:
        probs, order = _sorted(logits)
        keep = _unsort(probs.cumsum(-1) - probs < self.p, order)
        return logits.masked_fill(~keep, float("-inf"))


def tp_argsort_gather(logits: Tensor, p: float) -> Tensor:
    order = torch.argsort(logits, dim=-1, descending=True)
    probs = torch.softmax(logits, dim=-1).gather(-1, order)
    mass_before = torch.cumsum(probs, dim=-1) - probs
    keep_sorted = mass_before < p
    keep_sorted[..., 0] = True
    rank = torch.argsort(order, dim=-1)  # inverse permutation
    keep = keep_sorted.gather(-1, rank)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def tp_row_loop(logits: Tensor, p: float, filter_value: float = float("-inf")) -> Tensor:
    out = logits.clone()
    rows = out.view(-1, out.shape[-1])
    for row in rows:
        probs = torch.softmax(row, dim=0)
        idx = sorted(range(len(row)), key=lambda i: -probs[i].item())
        total, kept = 0.0, []
        for i in idx:
            if kept and total >= p:
                break
            kept.append(i)
            total += probs[i].item()
        drop = torch.ones(len(row), dtype=torch.bool)
        drop[kept] = False
        row[drop] = filter_value
    return out


CASES = [
    BlindCase(
        CHECK,
        "cumsum_includes_token",
        tp_cumsum_with_token,
        "mistake",
        "keeps the tokens whose cumulative sum including themselves is below p, dropping the token that crosses p",
    ),
    BlindCase(
        CHECK,
        "less_or_equal_on_mass_before",
        tp_less_equal,
        "mistake",
        "tests mass_before <= p instead of < p, keeping one token too many at exactly p",
    ),
    BlindCase(
        CHECK,
        "row_can_be_empty",
        tp_empty_row,
        "mistake",
        "keeps cumsum <= p with no special case for the first token, so a row whose top token exceeds p is empty",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        tp_probability_threshold,
        "mistake",
        "finds the probability of the last needed token and keeps every token at least that likely, ties included",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        tp_ascending,
        "mistake",
        "sorts the probabilities in ascending order, so the least likely tokens are kept",
    ),
    BlindCase(
        CHECK,
        "zero_instead_of_minus_inf",
        tp_zero_fill,
        "mistake",
        "sets the logits outside the nucleus to 0 instead of -inf",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        tp_returns_probs,
        "mistake",
        "returns the renormalized probabilities of the nucleus instead of filtered logits",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        tp_sorted_order_returned,
        "mistake",
        "sorts the logits and returns them masked but still in sorted order",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted_logits",
        tp_sorted_mask_unsorted_logits,
        "mistake",
        "computes the mask in sorted order and applies it to the unsorted logits without scattering it back",
    ),
    BlindCase(
        CHECK,
        "batch_rows_mixed",
        tp_rows_mixed,
        "mistake",
        "flattens the batch and sorts all rows together with a mass of p per row",
    ),
    BlindCase(
        CHECK,
        "changes_input_in_place",
        tp_in_place,
        "mistake",
        "writes -inf into the caller's logits tensor and returns it",
    ),
    BlindCase(
        CHECK,
        "slip_class_with_p_in_init",
        TopPFilter,
        "mistake",
        "writes a TopPFilter class taking p in __init__ and logits in __call__, and passes the class",
    ),
    BlindCase(
        CHECK,
        "argsort_gather_inverse",
        tp_argsort_gather,
        "correct",
        "sorts with argsort, gathers the probabilities and maps the mask back with the inverse permutation",
    ),
    BlindCase(
        CHECK,
        "python_loop_per_row",
        tp_row_loop,
        "correct",
        "loops over the rows in Python, adding tokens until the kept mass reaches p, with an optional filter_value",
    ),
]
