"""Blind set B5, check_top_p (chapter 18): nucleus filters as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"


# ---------------------------------------------------------------- mistakes


def top_p_renormalised(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    filtered = logits.masked_fill(~keep, float("-inf"))
    return filtered.log_softmax(-1)  # renormalised log-probabilities of the nucleus


def top_p_softmax_first_axis(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(0)  # axis 0: right for one row, wrong for a batch
    sorted_probs, order = probs.sort(-1, descending=True)
    keep_sorted = (sorted_probs.cumsum(-1) - sorted_probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_cumsum_of_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    mass = sorted_logits.cumsum(-1)  # summed the logits themselves; softmax forgotten
    keep_sorted = (mass - sorted_logits) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_rows_loop(logits: Tensor, p: float) -> Tensor:
    out = logits.clone()
    for i, row in enumerate(logits):  # assumes a (B, V) batch
        probs, order = row.softmax(-1).sort(descending=True)
        n = int(((probs.cumsum(-1) - probs) < p).sum())
        out[i, order[n:]] = float("-inf")
    return out


def top_p_gather_unsort(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = keep_sorted.gather(-1, order)  # gather with the sort order instead of its inverse
    return logits.masked_fill(~keep, float("-inf"))


def top_p_keep_two(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep_sorted[..., :2] = True  # at least two tokens, so that sampling still samples
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_returns_mask_too(logits: Tensor, p: float) -> tuple[Tensor, Tensor]:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf")), keep  # the kept mask as well


def top_p_float32_cumsum(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.float().softmax(-1).sort(-1, descending=True)
    before = probs.cumsum(-1) - probs  # in float32, "to save memory"
    keep_sorted = before < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf")).float()  # and returned in float32


def top_p_percent(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    percent = 100 * probs.cumsum(-1)  # thought of p as "90 %", the mass in percent
    keep_sorted = (percent - 100 * probs) < p * 10
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


# ---------------------------------------------------------------- correct variants


def top_p_ranks(logits: Tensor, p: float) -> Tensor:
    """Count the tokens needed, then keep every token whose rank is below that count."""
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    n_keep = (mass_before < p).sum(dim=-1, keepdim=True).clamp(min=1)  # (..., 1)
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(order.shape[-1]).expand_as(order).contiguous())
    return torch.where(rank < n_keep, logits, torch.full_like(logits, float("-inf")))


def top_p_flatten_loop(logits: Tensor, p: float) -> Tensor:
    """Any leading shape flattened to rows; each row filtered with Python floats."""
    rows = logits.reshape(-1, logits.shape[-1])
    out = rows.clone()
    for r, row in enumerate(rows):
        probs = row.softmax(-1)
        sorted_probs, order = probs.sort(descending=True)
        mass = 0.0
        for prob, token in zip(sorted_probs.tolist(), order.tolist()):
            if mass >= p:
                out[r, token] = float("-inf")
            mass += prob
    return out.reshape(logits.shape)


CASES = [
    BlindCase(
        CHECK,
        "renormalised_log_probs",
        top_p_renormalised,
        "mistake",
        "I returned log_softmax of the filtered logits, the renormalised log-probabilities, "
        "instead of the kept logits unchanged.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_axis_0",
        top_p_softmax_first_axis,
        "mistake",
        "I wrote softmax(0), which is the vocabulary for one row but the batch axis for a batch.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_raw_logits",
        top_p_cumsum_of_logits,
        "mistake",
        "I sorted the logits and compared the cumulative sum of the logits with p, "
        "forgetting the softmax.",
    ),
    BlindCase(
        CHECK,
        "loop_assumes_2d",
        top_p_rows_loop,
        "mistake",
        "I loop over the rows of a (B, V) batch, which breaks for one (V,) distribution or "
        "a (B, T, V) tensor.",
    ),
    BlindCase(
        CHECK,
        "gather_with_sort_order",
        top_p_gather_unsort,
        "mistake",
        "To put the mask back in vocabulary order I used gather with the sort order, "
        "which applies the permutation again instead of undoing it.",
    ),
    BlindCase(
        CHECK,
        "always_two_tokens",
        top_p_keep_two,
        "mistake",
        "I always keep at least the two most likely tokens, so sampling never becomes "
        "deterministic.",
    ),
    BlindCase(
        CHECK,
        "returns_mask_too",
        top_p_returns_mask_too,
        "mistake",
        "I return a tuple (filtered logits, kept mask) instead of the filtered logits.",
    ),
    BlindCase(
        CHECK,
        "float32_inside",
        top_p_float32_cumsum,
        "mistake",
        "I did the softmax and cumsum in float32 and returned float32, whatever the dtype "
        "of the input.",
    ),
    BlindCase(
        CHECK,
        "p_read_as_percent",
        top_p_percent,
        "mistake",
        "I put the mass in percent and compared it with p * 10 instead of p * 100.",
    ),
    BlindCase(
        CHECK,
        "rank_below_count",
        top_p_ranks,
        "correct",
        "Count the tokens needed from the sorted mass, give every token its rank with "
        "scatter, and keep those whose rank is below the count.",
    ),
    BlindCase(
        CHECK,
        "flatten_python_loop",
        top_p_flatten_loop,
        "correct",
        "Leading axes flattened to rows; for each row a Python loop over the sorted tokens "
        "drops a token once the mass before it reaches p.",
    ),
]
