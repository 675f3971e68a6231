"""Blind cases for check_top_p (chapter 18), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def keeps_one_too_few(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) < p  # the mass with the token itself
    keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def less_or_equal(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs
    keep = before <= p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def inclusive_cumsum_no_first(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = probs.cumsum(-1) <= p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def probability_threshold(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, _ = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs
    n_keep = (before < p).sum(-1, keepdim=True)  # how many tokens the nucleus needs
    threshold = sorted_probs.gather(-1, n_keep - 1)  # the probability of the last one
    return logits.masked_fill(probs < threshold, float("-inf"))


def ascending_sort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1)  # smallest first
    before = probs.cumsum(-1) - probs
    keep = before < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def zero_outside(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, 0.0)


def filtered_probabilities(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    keep = (sorted_probs.cumsum(-1) - sorted_probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return probs.masked_fill(~kept, float("-inf"))


def sorted_logits_returned(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = (probs.cumsum(-1) - probs) < p
    return sorted_logits.masked_fill(~keep, float("-inf"))


def inverse_by_gather(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    kept = keep.gather(-1, order)  # back to the vocabulary order
    return logits.masked_fill(~kept, float("-inf"))


def softmax_over_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = F.softmax(logits, dim=0).sort(dim=-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept, float("-inf"))


def filters_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = (probs.cumsum(-1) - probs) < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    logits[~kept] = float("-inf")
    return logits


# ---------------------------------------------------------------- correct variants


def shifted_cumsum(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.sort(logits.softmax(-1), dim=-1, descending=True)
    before = F.pad(probs.cumsum(-1), (1, 0))[..., :-1]  # the mass of the tokens ahead of each
    remove_sorted = before >= p
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))


def inverse_permutation_gather(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    kept = keep_sorted.gather(-1, order.argsort(-1))  # argsort of the order undoes the sort
    return torch.where(kept, logits, torch.full_like(logits, float("-inf")))


def python_loop_per_row(logits: Tensor, p: float, min_tokens: int = 1) -> Tensor:
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        probs = flat[r].softmax(-1)
        mass = 0.0
        for n, i in enumerate(torch.argsort(probs, descending=True).tolist()):
            if mass >= p and n >= min_tokens:
                break
            out[r, i] = flat[r, i]
            mass += float(probs[i])
    return out.reshape(logits.shape)


CASES = [
    BlindCase(
        CHECK,
        "keeps_one_too_few",
        keeps_one_too_few,
        "mistake",
        "I kept the tokens whose cumulative sum, the token itself included, is below p, so "
        "the token that crosses p is dropped (the first token always kept)",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        less_or_equal,
        "mistake",
        "I kept a token when the mass before it is <= p instead of < p: one token too many "
        "when the more likely tokens hold exactly p",
    ),
    BlindCase(
        CHECK,
        "inclusive_cumsum_no_first",
        inclusive_cumsum_no_first,
        "mistake",
        "I kept the tokens whose cumulative sum with the token is <= p and did not force the "
        "first one: the crossing token is dropped, and a row whose top token alone holds more "
        "than p ends up empty",
    ),
    BlindCase(
        CHECK,
        "probability_threshold",
        probability_threshold,
        "mistake",
        "I found the probability of the last token the nucleus needs and kept every token at "
        "least that likely, so tokens tied with it are all kept",
    ),
    BlindCase(
        CHECK,
        "ascending_sort",
        ascending_sort,
        "mistake",
        "I forgot descending=True in sort, so the least likely tokens are accumulated and kept",
    ),
    BlindCase(
        CHECK,
        "zero_outside",
        zero_outside,
        "mistake",
        "I set the logits outside the nucleus to 0 instead of -inf",
    ),
    BlindCase(
        CHECK,
        "filtered_probabilities",
        filtered_probabilities,
        "mistake",
        "I returned the filtered probabilities (softmax) instead of the filtered logits",
    ),
    BlindCase(
        CHECK,
        "sorted_logits_returned",
        sorted_logits_returned,
        "mistake",
        "I filtered the sorted logits and returned them as they were, in sorted order, not "
        "scattered back to the vocabulary's order",
    ),
    BlindCase(
        CHECK,
        "inverse_by_gather",
        inverse_by_gather,
        "mistake",
        "I put the sorted mask back with gather(-1, order) instead of scatter, which applies "
        "the permutation a second time instead of undoing it",
    ),
    BlindCase(
        CHECK,
        "softmax_over_dim0",
        softmax_over_dim0,
        "mistake",
        "I wrote softmax(logits, dim=0): for a batch the probabilities are taken across the "
        "rows, not over each row's vocabulary",
    ),
    BlindCase(
        CHECK,
        "filters_in_place",
        filters_in_place,
        "mistake",
        "I wrote -inf into the caller's logits (logits[~kept] = -inf) and returned them: the "
        "input is changed in place",
    ),
    BlindCase(
        CHECK,
        "shifted_cumsum",
        shifted_cumsum,
        "correct",
        "the exclusive cumulative sum by shifting the cumsum one place right with F.pad, and "
        "a removal mask (before >= p) scattered onto itself",
    ),
    BlindCase(
        CHECK,
        "inverse_permutation_gather",
        inverse_permutation_gather,
        "correct",
        "the sorted mask put back with gather(-1, order.argsort(-1)), the inverse "
        "permutation, and torch.where instead of masked_fill",
    ),
    BlindCase(
        CHECK,
        "python_loop_per_row",
        python_loop_per_row,
        "correct",
        "a Python loop over the rows and the sorted tokens, adding tokens until the mass "
        "reaches p; an extra min_tokens=1 argument",
    ),
]
