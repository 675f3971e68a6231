"""Blind set B21, check_top_p (chapter 18): nucleus filters as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p  # the token that crosses p is dropped
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_no_first(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) <= p  # no guarantee for the most likely token
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # ascending by default
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_fill_zero(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, 0.0)  # 0 for "removed"


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    all_probs = logits.softmax(-1)
    probs, order = all_probs.sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return all_probs.masked_fill(~kept, 0.0)  # the nucleus's probabilities


def top_p_sorted_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep_sorted = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep_sorted, float("-inf"))  # never put back in order


def top_p_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep_sorted, float("-inf"))  # sorted mask on unsorted logits


def top_p_gather_back(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = keep_sorted.gather(-1, order)  # gather where scatter was needed
    return logits.masked_fill(~kept, float("-inf"))


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(0).sort(-1, descending=True)  # dim 0
    keep_sorted = probs.cumsum(-1) - probs < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~kept] = float("-inf")
    return logits


def top_p_cumsum_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    cum = sorted_logits.cumsum(-1)  # summed the logits, no softmax
    keep_sorted = cum - sorted_logits < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_keeps_complement(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    remove_sorted = probs.cumsum(-1) - probs < p  # named it "remove" and masked those
    remove_sorted[..., 0] = False
    remove = torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))


def top_p_cumsum_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(0) - probs  # cumsum over the rows
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_shifted_remove(logits: Tensor, p: float) -> Tensor:
    """Remove where the mass before a token already reaches p, by shifting the cumsum."""
    sorted_logits, idx = torch.sort(logits, descending=True, dim=-1)
    cum = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
    before = torch.cat([torch.zeros_like(cum[..., :1]), cum[..., :-1]], dim=-1)
    remove_sorted = before >= p
    remove = remove_sorted.scatter(-1, idx, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))


def top_p_loop(logits: Tensor, p: float) -> Tensor:
    """Row by row in Python: add tokens by decreasing probability until the mass reaches p."""
    out = logits.clone()
    flat = out.reshape(-1, logits.shape[-1])
    for row in flat:
        probs = row.softmax(-1)
        order = probs.argsort(descending=True).tolist()
        mass, keep = 0.0, []
        for i in order:
            if keep and mass >= p:
                break
            keep.append(i)
            mass += float(probs[i])
        drop = torch.ones_like(row, dtype=torch.bool)
        drop[keep] = False
        row[drop] = float("-inf")
    return out


def top_p_inverse_argsort(logits: Tensor, p: float) -> Tensor:
    """Sorted-order mask brought back with the inverse permutation (argsort of argsort)."""
    order = logits.argsort(dim=-1, descending=True)
    probs = logits.softmax(dim=-1).gather(-1, order)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep_sorted[..., 0] = True
    inverse = order.argsort(dim=-1)
    kept = keep_sorted.gather(-1, inverse)
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


CASES = [
    BlindCase(
        CHECK,
        "cum_with_token",
        top_p_cum_with_token,
        "mistake",
        "kept tokens whose cumulative sum, the token itself included, is below p",
    ),
    BlindCase(
        CHECK,
        "cum_le_no_first",
        top_p_no_first,
        "mistake",
        "cumsum <= p with no special case for the first token: rows can be empty",
    ),
    BlindCase(
        CHECK, "ascending", top_p_ascending, "mistake", "sorted ascending (forgot descending=True)"
    ),
    BlindCase(CHECK, "fill_zero", top_p_fill_zero, "mistake", "set the dropped logits to 0"),
    BlindCase(
        CHECK,
        "returns_probs",
        top_p_returns_probs,
        "mistake",
        "returned the probabilities with the tail zeroed, not logits",
    ),
    BlindCase(
        CHECK,
        "sorted_logits",
        top_p_sorted_logits,
        "mistake",
        "returned the filtered logits in sorted order",
    ),
    BlindCase(
        CHECK,
        "mask_unsorted",
        top_p_mask_unsorted,
        "mistake",
        "laid the sorted-order mask directly on the unsorted logits",
    ),
    BlindCase(
        CHECK,
        "gather_back",
        top_p_gather_back,
        "mistake",
        "mapped the mask back with gather(order) instead of scatter",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        top_p_softmax_dim0,
        "mistake",
        "softmax(0): over the batch for a batch of rows",
    ),
    BlindCase(CHECK, "in_place", top_p_in_place, "mistake", "wrote -inf into the caller's logits"),
    BlindCase(
        CHECK,
        "cumsum_logits",
        top_p_cumsum_logits,
        "mistake",
        "summed sorted logits, without the softmax",
    ),
    BlindCase(
        CHECK,
        "keeps_complement",
        top_p_keeps_complement,
        "mistake",
        "computed the keep mask but masked it (not its complement) with -inf",
    ),
    BlindCase(
        CHECK,
        "cumsum_dim0",
        top_p_cumsum_dim0,
        "mistake",
        "cumsum(0) over the rows instead of over the sorted vocabulary",
    ),
    BlindCase(
        CHECK,
        "shifted_remove",
        top_p_shifted_remove,
        "correct",
        "remove where the shifted cumulative sum (mass before) is >= p",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        top_p_loop,
        "correct",
        "a Python loop per row, adding tokens until the mass reaches p",
    ),
    BlindCase(
        CHECK,
        "inverse_argsort",
        top_p_inverse_argsort,
        "correct",
        "argsort of argsort to bring the mask back, torch.where for the fill",
    ),
]
