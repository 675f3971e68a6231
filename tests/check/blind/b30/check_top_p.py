"""Blind set B30, check_top_p (chapter 18): nucleus filtering as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p  # keep while the running total is under p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # sorted, but smallest first
    keep_sorted = probs.cumsum(-1) - probs < p
    keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_fill_zero(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * keep  # zero out what falls outside the nucleus


def top_p_sorted_mask_unsorted_logits(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1).sort(-1, descending=True).values
    keep_sorted = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep_sorted, float("-inf"))  # forgot to scatter back


def top_p_returns_sorted(logits: Tensor, p: float) -> Tensor:
    sorted_logits = logits.sort(-1, descending=True).values
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill_(~keep, float("-inf"))  # saves a copy


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.softmax(logits, dim=0).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_no_softmax(logits: Tensor, p: float) -> Tensor:
    values, order = logits.sort(-1, descending=True)
    before = values.cumsum(-1) - values  # summed the logits themselves
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    keep = probs >= probs.max(-1, keepdim=True).values * (1 - p)  # "close enough" to the top
    return logits.masked_fill(~keep, float("-inf"))


def top_p_as_top_k(logits: Tensor, p: float) -> Tensor:
    V = logits.shape[-1]
    k = max(1, int(p * V))  # keep the top p share of the vocabulary
    kept = torch.zeros_like(logits, dtype=torch.bool)
    kept.scatter_(-1, logits.topk(k, dim=-1).indices, True)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_renormalised(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf")).log_softmax(-1)  # ready to sample from


def top_p_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs <= p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_argsort_gather(logits: Tensor, p: float) -> Tensor:
    probs = torch.softmax(logits, dim=-1)
    order = torch.argsort(probs, dim=-1, descending=True)
    sorted_probs = torch.gather(probs, -1, order)
    mass_before = sorted_probs.cumsum(-1) - sorted_probs
    keep_sorted = (mass_before < p) | (torch.arange(logits.shape[-1]) == 0)
    keep = torch.gather(keep_sorted, -1, order.argsort(-1))  # back to the vocabulary's order
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs, order = flat[r].softmax(-1).sort(descending=True)
        before = probs.cumsum(0) - probs
        for i in range(len(order)):
            if i == 0 or before[i] < p:
                out[r, order[i]] = flat[r, order[i]]
            else:
                break
    return out.reshape(logits.shape)


def top_p_index_put(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    drop_sorted = probs.cumsum(-1) - probs >= p
    drop_sorted[..., :min_keep] = False
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    out = logits.clone()
    out[drop] = float("-inf")
    return out


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose running total (including themselves) is below p.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted the probabilities without descending=True, so I started from the least likely.",
    ),
    BlindCase(
        CHECK,
        "fill_zero",
        top_p_fill_zero,
        "mistake",
        "I multiplied the logits by the keep mask, so the dropped tokens get logit 0.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted_logits",
        top_p_sorted_mask_unsorted_logits,
        "mistake",
        "I built the mask in sorted order and applied it directly to the original logits.",
    ),
    BlindCase(
        CHECK,
        "returns_sorted",
        top_p_returns_sorted,
        "mistake",
        "I sorted the logits and returned the filtered sorted logits.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I used masked_fill_ to save memory, which writes -inf into the caller's logits.",
    ),
    BlindCase(
        CHECK,
        "softmax_dim0",
        top_p_softmax_dim0,
        "mistake",
        "I wrote torch.softmax(logits, dim=0), which normalises over the batch, not the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_no_softmax,
        "mistake",
        "I forgot the softmax and summed the sorted logits against p.",
    ),
    BlindCase(
        CHECK,
        "ratio_to_top_threshold",
        top_p_probability_threshold,
        "mistake",
        "I kept every token whose probability is at least (1 - p) times the top one.",
    ),
    BlindCase(
        CHECK,
        "share_of_vocabulary",
        top_p_as_top_k,
        "mistake",
        "I read p as a share of the vocabulary and kept the int(p * V) best tokens.",
    ),
    BlindCase(
        CHECK,
        "returns_renormalised_log_probs",
        top_p_renormalised,
        "mistake",
        "I returned log_softmax of the filtered logits, renormalised over the nucleus.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        top_p_le,
        "mistake",
        "I kept a token when the mass before it is <= p.",
    ),
    BlindCase(
        CHECK,
        "argsort_gather",
        top_p_argsort_gather,
        "correct",
        "argsort and gather, then the mask put back in order with the inverse permutation, "
        "torch.where for the fill.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        top_p_row_loop,
        "correct",
        "A Python loop over the rows and then over the sorted tokens, stopping at the first "
        "token whose predecessors already hold p.",
    ),
    BlindCase(
        CHECK,
        "drop_mask_index_put",
        top_p_index_put,
        "correct",
        "A mask of the tokens to drop, written into a clone by boolean indexing; an extra "
        "min_keep argument that defaults to 1.",
    ),
]
