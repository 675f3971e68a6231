"""Blind set B24, check_top_p (chapter 18): the nucleus filter as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) <= p  # the tokens whose running total stays within p
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_before_le(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before <= p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_strict_no_first(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    cum = probs.cumsum(-1)
    keep_sorted = torch.cat([cum[..., :1] < p, cum[..., :-1] < p], dim=-1)  # shifted by one
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs = probs.sort(dim=-1, descending=True).values
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the smallest probability kept
    return logits.masked_fill(probs < threshold, float("-inf"))


def top_p_ascending(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1)
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_zero_fill(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * kept  # zero out the others


def top_p_returns_probs(logits: Tensor, p: float) -> Tensor:
    all_probs = logits.softmax(-1)
    probs, order = all_probs.sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return all_probs.masked_fill(~kept, 0.0)  # ready for torch.multinomial


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(dim=-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = (probs.cumsum(-1) - probs) < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def top_p_sorted_mask_unsorted(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1).sort(dim=-1, descending=True).values
    keep = (probs.cumsum(-1) - probs) < p
    return logits.masked_fill(~keep, float("-inf"))


def top_p_union_over_batch(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    remove_sorted = (probs.cumsum(-1) - probs) >= p
    out = logits.clone()
    out[..., order[remove_sorted]] = float("-inf")  # the ids to remove
    return out


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    logits[~kept] = float("-inf")
    return logits


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(0).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_no_softmax(logits: Tensor, p: float) -> Tensor:
    values, order = logits.sort(dim=-1, descending=True)
    keep_sorted = (values.cumsum(-1) - values) < p  # the running total of the scores
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_fraction_of_vocab(logits: Tensor, p: float) -> Tensor:
    V = logits.shape[-1]
    k = max(1, round(p * V))  # the top p of the vocabulary
    kept = torch.zeros_like(logits, dtype=torch.bool)
    kept.scatter_(-1, logits.topk(k, dim=-1).indices, True)
    return logits.masked_fill(~kept, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_argsort_gather(logits: Tensor, p: float) -> Tensor:
    """The sorted mask brought back with the inverse permutation (argsort of the order)."""
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    kept = keep_sorted.gather(-1, order.argsort(-1))
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def top_p_row_loop(logits: Tensor, p: float) -> Tensor:
    """Every row of the flattened batch on its own, with a Python loop over the sorted tokens."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs, order = flat[r].softmax(-1).sort(descending=True)
        before = probs.cumsum(-1) - probs
        for i in range(len(order)):
            if i > 0 and not before[i] < p:
                break
            out[r, order[i]] = flat[r, order[i]]
    return out.reshape(logits.shape)


def top_p_index_put(logits: Tensor, p: float, min_keep: int = 1) -> Tensor:
    """A copy with -inf put through the sorted indices of the removed tokens; min_keep option."""
    probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
    before = torch.cumsum(probs, dim=-1) - probs
    remove_sorted = before >= p
    remove_sorted[..., :min_keep] = False
    remove = torch.zeros_like(remove_sorted)
    remove.scatter_(-1, order, remove_sorted)
    out = logits.clone()
    out[remove] = float("-inf")
    return out


CASES = [
    BlindCase(
        CHECK,
        "cumsum_with_token_le_p",
        top_p_cumsum_with_token,
        "mistake",
        "Kept the tokens whose cumulative sum, themselves included, is <= p.",
    ),
    BlindCase(
        CHECK,
        "before_le_p",
        top_p_before_le,
        "mistake",
        "before <= p instead of before < p.",
    ),
    BlindCase(
        CHECK,
        "shifted_cumsum_first_test",
        top_p_strict_no_first,
        "mistake",
        "I shifted the cumulative sum by one with torch.cat but put the first token's own "
        "cumsum < p in front, so a token alone above p leaves the row empty.",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        top_p_threshold,
        "mistake",
        "I found the smallest probability the nucleus needs and kept every token at least that "
        "likely.",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        top_p_ascending,
        "mistake",
        "sort() without descending=True.",
    ),
    BlindCase(
        CHECK,
        "zero_instead_of_minus_inf",
        top_p_zero_fill,
        "mistake",
        "logits * kept: the tokens outside the nucleus get logit 0.",
    ),
    BlindCase(
        CHECK,
        "returns_probabilities",
        top_p_returns_probs,
        "mistake",
        "I return the filtered probabilities (0 outside), not the logits.",
    ),
    BlindCase(
        CHECK,
        "sorted_order_returned",
        top_p_sorted_output,
        "mistake",
        "I filter the sorted logits and return them in sorted order.",
    ),
    BlindCase(
        CHECK,
        "sorted_mask_on_unsorted_logits",
        top_p_sorted_mask_unsorted,
        "mistake",
        "The keep mask computed in sorted order is laid directly on the logits.",
    ),
    BlindCase(
        CHECK,
        "removed_ids_of_all_rows",
        top_p_union_over_batch,
        "mistake",
        "out[..., order[remove]] = -inf: the ids removed in any row are removed in every row.",
    ),
    BlindCase(
        CHECK,
        "input_changed_in_place",
        top_p_in_place,
        "mistake",
        "logits[~kept] = -inf on the argument itself, then return it.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        top_p_softmax_dim0,
        "mistake",
        "softmax(0): over the rows of the batch instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_no_softmax,
        "mistake",
        "I forgot the softmax: the running total is over the sorted logits.",
    ),
    BlindCase(
        CHECK,
        "top_p_fraction_of_vocabulary",
        top_p_fraction_of_vocab,
        "mistake",
        "I kept the round(p * V) most likely tokens, a share p of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "argsort_gather",
        top_p_argsort_gather,
        "correct",
        "The sorted mask gathered back with order.argsort(); torch.where with a -inf tensor.",
    ),
    BlindCase(
        CHECK,
        "python_loop_per_row",
        top_p_row_loop,
        "correct",
        "Flatten the batch, loop over rows and over sorted tokens, break once p is reached.",
    ),
    BlindCase(
        CHECK,
        "index_put_min_keep",
        top_p_index_put,
        "correct",
        "scatter_ of the removed positions, boolean index on a clone; min_keep=1 as an option.",
    ),
]
