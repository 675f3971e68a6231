"""Blind set B12, check_top_p (chapter 18): nucleus filtering as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _scatter_back(keep_sorted: Tensor, order: Tensor) -> Tensor:
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---------------------------------------------------------------- mistakes


def topp_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p  # the tokens whose running total stays within p
    keep[..., 0] = True
    return logits.masked_fill(~_scatter_back(keep, order), float("-inf"))


def topp_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p  # keep while the mass before is at most p
    return logits.masked_fill(~_scatter_back(keep, order), float("-inf"))


def topp_no_first(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p  # forgot that the first token must always stay
    keep = torch.cat([keep[..., :1] & False, keep[..., :-1]], -1) | keep
    return logits.masked_fill(~_scatter_back(keep, order), float("-inf"))


def topp_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens are needed
    cutoff = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one needed
    return logits.masked_fill(probs < cutoff, float("-inf"))  # every token at least as likely


def topp_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # sorted, smallest first
    before = probs.cumsum(-1) - probs
    keep = before < p
    keep[..., 0] = True
    return logits.masked_fill(~_scatter_back(keep, order), float("-inf"))


def topp_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = _scatter_back(before < p, order)
    return logits * keep  # zero out the tokens outside the nucleus


def topp_returns_probs(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    keep = _scatter_back(before < p, order)
    out = probs.masked_fill(~keep, 0.0)
    return out / out.sum(-1, keepdim=True)  # renormalized probabilities, ready to sample


def topp_sorted_order(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    before = probs.cumsum(-1) - probs
    return sorted_logits.masked_fill(before >= p, float("-inf"))  # forgot to unsort


def topp_mask_on_unsorted(logits: Tensor, p: float) -> Tensor:
    probs, _ = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    remove = before >= p
    return logits.masked_fill(remove, float("-inf"))  # the sorted mask on the original order


def topp_flat_batch(logits: Tensor, p: float) -> Tensor:
    flat = logits.reshape(-1)  # one distribution over everything
    probs, order = flat.softmax(-1).sort(descending=True)
    before = probs.cumsum(-1) - probs
    keep = torch.zeros_like(before, dtype=torch.bool).scatter(0, order, before < p)
    keep[order[0]] = True
    return flat.masked_fill(~keep, float("-inf")).view_as(logits)


def topp_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    kept = _scatter_back(before < p, order)
    logits[~kept] = float("-inf")  # no need for a copy
    return logits


def topp_gather_instead_of_scatter(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    kept = keep_sorted.gather(-1, order)  # gather, thinking it undoes the sort
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def topp_argsort_rank(logits: Tensor, p: float) -> Tensor:
    """The rank of each token from a double argsort; the kept tokens are those ranked before
    the cut-off count."""
    probs = logits.softmax(-1)
    order = probs.argsort(-1, descending=True)
    rank = order.argsort(-1)
    sorted_probs = probs.gather(-1, order)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True).clamp(min=1)
    return torch.where(rank < n_keep, logits, torch.full_like(logits, float("-inf")))


def topp_shift_right(logits: Tensor, p: float) -> Tensor:
    """The Hugging Face way: remove where cumsum > p, shifted right by one place, so the
    crossing token stays; index_put through the sorted indices."""
    sorted_logits, idx = torch.sort(logits, descending=True, dim=-1)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    remove = cum >= p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    remove_orig = remove.scatter(-1, idx, remove)
    out = logits.clone()
    out[remove_orig] = float("-inf")
    return out


def topp_loop_rows(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    """A Python loop over the rows of a flattened batch; an extra min_keep argument."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for i, row in enumerate(flat):
        probs = torch.softmax(row, 0)
        values, idx = torch.sort(probs, descending=True)
        total = 0.0
        for j, (pr, token) in enumerate(zip(values.tolist(), idx.tolist())):
            if total >= p and j >= min_keep:
                break
            out[i, token] = row[token]
            total += pr
    return out.view_as(logits)


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token",
        topp_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum (with themselves) is <= p, so the token "
        "that crosses p is dropped.",
    ),
    BlindCase(
        CHECK,
        "before_le_p",
        topp_before_le,
        "mistake",
        "I kept a token when the mass before it is <= p, one too many at exactly p.",
    ),
    BlindCase(
        CHECK,
        "first_not_forced",
        topp_no_first,
        "mistake",
        "cumsum < p, shifted right by one; but the first token is not forced to stay, so a "
        "row whose top token holds more than p is empty.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        topp_threshold,
        "mistake",
        "I found the probability of the last token needed and kept every token at least "
        "that likely, so ties with it are all kept.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        topp_ascending,
        "mistake",
        "I sorted ascending (sort's default), so the least likely tokens are kept.",
    ),
    BlindCase(
        CHECK,
        "zero_not_minus_inf",
        topp_zero_fill,
        "mistake",
        "I multiplied the logits by the mask, so removed tokens get 0, not -inf.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        topp_returns_probs,
        "mistake",
        "I returned the renormalized probabilities instead of filtered logits.",
    ),
    BlindCase(
        CHECK,
        "left_sorted",
        topp_sorted_order,
        "mistake",
        "I filtered the sorted logits and returned them in sorted order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted",
        topp_mask_on_unsorted,
        "mistake",
        "I computed the mask in sorted order and applied it to the unsorted logits.",
    ),
    BlindCase(
        CHECK,
        "batch_flattened",
        topp_flat_batch,
        "mistake",
        "I flattened the batch and filtered it as one distribution.",
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
        "gather_not_scatter",
        topp_gather_instead_of_scatter,
        "mistake",
        "I used gather with the sort order to unsort the mask; that needs scatter.",
    ),
    BlindCase(
        CHECK,
        "argsort_rank",
        topp_argsort_rank,
        "correct",
        "Ranks from a double argsort; a token is kept if its rank is below the count needed.",
    ),
    BlindCase(
        CHECK,
        "hf_shift_right",
        topp_shift_right,
        "correct",
        "Hugging Face style: cumsum >= p shifted right, unsorted with scatter, on a clone.",
    ),
    BlindCase(
        CHECK,
        "python_loop_min_keep",
        topp_loop_rows,
        "correct",
        "A Python loop over rows and sorted tokens; extra min_keep=1 argument.",
    ),
]
