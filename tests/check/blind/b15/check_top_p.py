"""Blind set B15, check_top_p (chapter 18): the nucleus filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _scatter_back(logits: Tensor, order: Tensor, keep_sorted: Tensor) -> Tensor:
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p  # the running total including the token
    return _scatter_back(logits, order, keep)


def top_p_less_equal(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p
    return _scatter_back(logits, order, keep)


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens
    cutoff = sorted_probs.gather(-1, n_keep - 1)  # the smallest kept probability
    return logits.masked_fill(probs < cutoff, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # forgot descending=True
    before = probs.cumsum(-1) - probs
    keep = before < p
    return _scatter_back(logits, order, keep)


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits * kept  # zero out the others


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    keep = sorted_probs.cumsum(-1) - sorted_probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    filtered = probs.masked_fill(~kept, 0.0)
    return filtered / filtered.sum(-1, keepdim=True)  # renormalised, ready to sample


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = probs.cumsum(-1) - probs < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    return logits.masked_fill(~keep, float("-inf"))  # forgot to undo the sort


def top_p_flattened_batch(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)
    probs, order = flat.softmax(-1).sort(descending=True)  # one distribution for the batch
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(0, order, keep)
    return flat.masked_fill(~kept, float("-inf")).view_as(logits)


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    logits[~kept] = float("-inf")
    return logits


def top_p_gather_instead_of_scatter(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = keep.gather(-1, order)  # gather where scatter is needed
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_hf_style(logits: Tensor, p: float) -> Tensor:
    """Transformers' way: remove where the cumulative sum exceeds p, shifted right by one."""
    sorted_logits, idx = torch.sort(logits, descending=True, dim=-1)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum >= p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    remove = remove.scatter(-1, idx, remove)
    return logits.masked_fill(remove, -float("inf"))


def top_p_argsort_loop(logits: Tensor, p: float) -> Tensor:
    """Row by row with argsort and a Python loop over the sorted tokens."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs = flat[r].softmax(-1)
        total = 0.0
        for i in torch.argsort(probs, descending=True).tolist():
            if total >= p:
                break
            out[r, i] = flat[r, i]
            total += probs[i].item()
    return out.view_as(logits)


def top_p_where_rank(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    """torch.where on the rank of each token; an extra min_keep argument."""
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    mass_before = torch.cat([torch.zeros_like(probs[..., :1]), probs.cumsum(-1)[..., :-1]], -1)
    ranks = torch.arange(probs.shape[-1], device=logits.device)
    keep_sorted = (mass_before < p) | (ranks < min_keep)
    keep = torch.empty_like(keep_sorted)
    keep.scatter_(-1, order, keep_sorted)
    return torch.where(keep, logits, torch.tensor(float("-inf"), dtype=logits.dtype))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum, the token itself included, is below p, so the "
        "token that crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        top_p_less_equal,
        "mistake",
        "I kept a token while the mass before it is <= p instead of < p.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_threshold,
        "mistake",
        "I found the smallest kept probability and kept every token with at least that "
        "probability, so ties with it are all kept.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "I sorted ascending (forgot descending=True), keeping the least likely tokens.",
    ),
    BlindCase(
        CHECK,
        "zero_not_minus_inf",
        top_p_zero_fill,
        "mistake",
        "I multiplied the logits by the mask, so the removed tokens get logit 0.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I returned the renormalised probabilities of the nucleus instead of logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_output,
        "mistake",
        "I returned the filtered logits in sorted order, without putting them back.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        top_p_mask_unsorted,
        "mistake",
        "I computed the keep mask in sorted order and applied it to the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "batch_flattened",
        top_p_flattened_batch,
        "mistake",
        "I flattened the logits to one vector, so the rows of a batch share one softmax.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I wrote -inf into the caller's logits in place and returned them.",
    ),
    BlindCase(
        CHECK,
        "gather_not_scatter",
        top_p_gather_instead_of_scatter,
        "mistake",
        "I unsorted the mask with gather(-1, order) instead of scatter.",
    ),
    BlindCase(
        CHECK,
        "shifted_remove_mask",
        top_p_hf_style,
        "correct",
        "The Hugging Face formulation: remove where cumsum >= p, shifted right by one.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        top_p_argsort_loop,
        "correct",
        "A Python loop over each row's tokens in argsort order, adding probabilities.",
    ),
    BlindCase(
        CHECK,
        "where_with_min_keep",
        top_p_where_rank,
        "correct",
        "Mass before each token from a shifted cumsum, torch.where, an extra min_keep=1.",
    ),
]
