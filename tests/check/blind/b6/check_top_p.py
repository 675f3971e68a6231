"""Blind set B6, check_top_p (chapter 18): nucleus filters as readers write them."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


def _unsort(keep_sorted: Tensor, order: Tensor) -> Tensor:
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---------------------------------------------------------------- mistakes


def top_p_hf_shift(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
    cumulative = sorted_logits.softmax(-1).cumsum(-1)
    # Hugging Face's older recipe: remove above p, then shift right to keep the crossing token
    remove = cumulative > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    return logits.masked_fill(_unsort(remove, order), float("-inf"))


def top_p_inclusive_cumsum(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) < p  # mass up to and including the token
    keep_sorted[..., 0] = True  # the best token always stays
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_minus_1e9(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    return logits.masked_fill(~_unsort(keep_sorted, order), -1e9)  # "as good as -inf"


def top_p_batch_max_count(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    n = int(((probs.cumsum(-1) - probs) < p).sum(-1).max())  # one count for the whole batch
    keep_sorted = torch.zeros_like(probs, dtype=torch.bool)
    keep_sorted[..., :n] = True
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep = _unsort((probs.cumsum(-1) - probs) < p, order)
    logits[~keep] = float("-inf")  # write into the caller's logits
    return logits


def top_p_fraction_of_vocabulary(logits: Tensor, p: float) -> Tensor:
    V = logits.shape[-1]
    k = max(1, math.ceil(p * V))  # "the top p of the tokens"
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_dim_one(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(dim=1).sort(dim=1, descending=True)  # logits are (B, V)
    keep_sorted = (probs.cumsum(dim=1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_naive_softmax(logits: Tensor, p: float) -> Tensor:
    e = logits.exp()  # softmax by hand, without subtracting the maximum
    probs, order = (e / e.sum(-1, keepdim=True)).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    return logits.masked_fill(~_unsort(keep_sorted, order), float("-inf"))


def top_p_relative_to_best(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    best = probs.max(-1, keepdim=True).values
    # keep the tokens at least (1 - p) times as likely as the best one
    return logits.masked_fill(probs < (1 - p) * best, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_filter_sorted_logits(logits: Tensor, p: float) -> Tensor:
    """Filter the logits in sorted order, then scatter them back to vocabulary order."""
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    sorted_logits = logits.gather(-1, order)
    before = probs.cumsum(dim=-1) - probs
    filtered = sorted_logits.masked_fill(before >= p, float("-inf"))
    return torch.empty_like(logits).scatter(-1, order, filtered)


def top_p_argsort_gather(logits: Tensor, p: float) -> Tensor:
    """The inverse permutation with argsort, the sorted mask gathered back through it."""
    probs = torch.softmax(logits, dim=-1)
    order = torch.argsort(probs, dim=-1, descending=True)
    sorted_probs = torch.gather(probs, -1, order)
    mass_before = sorted_probs.cumsum(-1) - sorted_probs
    keep_sorted = mass_before < p
    keep = torch.gather(keep_sorted, -1, torch.argsort(order, dim=-1))
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))


def top_p_searchsorted(logits: Tensor, p: float) -> Tensor:
    """searchsorted finds the first rank whose mass before it reaches p: the number of tokens
    to keep."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    before = (probs.cumsum(-1) - probs).contiguous()
    target = torch.full((*before.shape[:-1], 1), p, dtype=before.dtype, device=before.device)
    n_keep = torch.searchsorted(before, target)  # (..., 1)
    ranks = torch.arange(before.shape[-1], device=before.device)
    return logits.masked_fill(~_unsort(ranks < n_keep, order), float("-inf"))


CASES = [
    BlindCase(
        CHECK,
        "hf_shift_right",
        top_p_hf_shift,
        "mistake",
        "I ported Hugging Face's older recipe: remove tokens whose cumulative probability is "
        "> p, then shift the removal mask right by one; it keeps a token when the mass before "
        "it is <= p, so one token too many where that mass is exactly p.",
    ),
    BlindCase(
        CHECK,
        "inclusive_cumsum",
        top_p_inclusive_cumsum,
        "mistake",
        "I keep the tokens whose cumulative sum including themselves is below p (plus the best "
        "one), which drops the token that makes the mass reach p.",
    ),
    BlindCase(
        CHECK,
        "minus_1e9",
        top_p_minus_1e9,
        "mistake",
        "I set the removed tokens to -1e9 instead of -inf.",
    ),
    BlindCase(
        CHECK,
        "batch_max_count",
        top_p_batch_max_count,
        "mistake",
        "I count how many tokens each row needs and keep the largest count in every row of "
        "the batch.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        top_p_in_place,
        "mistake",
        "I write -inf into the logits I was given (logits[~keep] = -inf) and return them.",
    ),
    BlindCase(
        CHECK,
        "fraction_of_vocabulary",
        top_p_fraction_of_vocabulary,
        "mistake",
        "I read top-p as the top ceil(p * V) tokens, a fraction of the vocabulary, not a mass "
        "of probability.",
    ),
    BlindCase(
        CHECK,
        "dim_one_hard_coded",
        top_p_dim_one,
        "mistake",
        "I wrote dim=1 everywhere because logits are (B, V); a (V,) row or a (B, T, V) batch "
        "is filtered along the wrong axis or fails.",
    ),
    BlindCase(
        CHECK,
        "naive_softmax",
        top_p_naive_softmax,
        "mistake",
        "I wrote the softmax by hand as exp(x) / sum(exp(x)) without subtracting the maximum, "
        "which overflows to NaN for large logits.",
    ),
    BlindCase(
        CHECK,
        "relative_to_best",
        top_p_relative_to_best,
        "mistake",
        "I keep every token whose probability is at least (1 - p) times the best token's, a "
        "threshold relative to the maximum, instead of summing the sorted probabilities.",
    ),
    BlindCase(
        CHECK,
        "filter_sorted_then_scatter",
        top_p_filter_sorted_logits,
        "correct",
        "The logits gathered in sorted order are filtered where the mass before them reaches "
        "p, then scattered back to vocabulary order.",
    ),
    BlindCase(
        CHECK,
        "argsort_gather",
        top_p_argsort_gather,
        "correct",
        "argsort for the order, argsort of the order as its inverse, and gather to bring the "
        "sorted mask back; torch.where for the result.",
    ),
    BlindCase(
        CHECK,
        "searchsorted",
        top_p_searchsorted,
        "correct",
        "torch.searchsorted on the mass before each sorted token gives the number of tokens "
        "to keep; the ranks below it are kept.",
    ),
]
