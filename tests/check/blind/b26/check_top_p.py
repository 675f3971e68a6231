"""Blind set B26, check_top_p (chapter 18): nucleus (top-p) filtering as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_top_p"

NEG = float("-inf")


def _unsort(keep_sorted: Tensor, order: Tensor) -> Tensor:
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# ---------------------------------------------------------------- mistakes


def top_p_cumsum_with_token(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = probs.cumsum(-1) <= p  # the tokens that fit into p
    return logits.masked_fill(~_unsort(keep_sorted, order), NEG)


def top_p_shift_wrong_way(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    remove = probs.cumsum(-1) > p
    remove[..., :-1] = remove[..., 1:].clone()  # shift so that the crossing token stays
    remove[..., 0] = False
    return logits.masked_fill(_unsort(remove, order), NEG)


def top_p_cumsum_of_logits(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(-1, descending=True)
    before = sorted_logits.cumsum(-1) - sorted_logits  # the mass before each token
    keep_sorted = before < p
    keep_sorted[..., 0] = True
    return logits.masked_fill(~_unsort(keep_sorted, order), NEG)


def top_p_gather_back(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    kept = keep_sorted.gather(-1, order)  # back to the vocabulary's order
    return logits.masked_fill(~kept, NEG)


def top_p_softmax_dim0(logits: Tensor, p: float) -> Tensor:
    probs, order = torch.softmax(logits, dim=0).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep_sorted[..., 0] = True
    return logits.masked_fill(~_unsort(keep_sorted, order), NEG)


def top_p_as_top_k(logits: Tensor, p: float) -> Tensor:
    k = max(1, int(p * logits.shape[-1]))  # keep the top p of the vocabulary
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, NEG)


def top_p_renormalized(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep_sorted[..., 0] = True
    kept = _unsort(keep_sorted, order)
    nucleus = logits.softmax(-1).masked_fill(~kept, 0.0)
    return (nucleus / nucleus.sum(-1, keepdim=True)).log()  # renormalized over the nucleus


def top_p_no_sort(logits: Tensor, p: float) -> Tensor:
    probs = logits.softmax(-1)
    before = probs.cumsum(-1) - probs  # the mass before each token
    keep = before < p
    return logits.masked_fill(~keep, NEG)


def top_p_one_row(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep_sorted[..., 0] = True
    out = torch.full_like(logits, NEG)
    idx = order[keep_sorted]  # the ids to keep
    out[..., idx] = logits[..., idx]
    return out


def top_p_in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep_sorted[..., 0] = True
    return logits.masked_fill_(~_unsort(keep_sorted, order), NEG)


def top_p_hf_snippet(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = torch.sort(logits, descending=True)
    cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cum > p  # copied: remove the tokens once the sum passes p, shifted right by one
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    return logits.masked_fill(remove.scatter(-1, order, remove), NEG)


def top_p_fill_min(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    keep_sorted = (probs.cumsum(-1) - probs) < p
    keep_sorted[..., 0] = True
    smallest = torch.finfo(logits.dtype).min
    return logits.masked_fill(~_unsort(keep_sorted, order), smallest)  # -inf gives NaN


def top_p_sorted_output(logits: Tensor, p: float) -> Tensor:
    sorted_logits, _ = logits.sort(-1, descending=True)
    probs = sorted_logits.softmax(-1)
    keep = (probs.cumsum(-1) - probs) < p
    keep[..., 0] = True
    return sorted_logits.masked_fill(~keep, NEG)


# ---------------------------------------------------------------- correct variants


def top_p_remove_mask(logits: Tensor, p: float) -> Tensor:
    """A remove mask instead of a keep mask: the mass before a token has reached p; the most
    likely token is never removed."""
    probs, order = torch.sort(logits.softmax(dim=-1), dim=-1, descending=True)
    remove = probs.cumsum(dim=-1).sub(probs).ge(p)
    remove[..., 0] = False
    remove = torch.zeros_like(remove).scatter_(-1, order, remove)
    return torch.where(remove, torch.full_like(logits, float("-inf")), logits)


def top_p_rows_loop(logits: Tensor, p: float) -> Tensor:
    """One row at a time: a Python loop over the sorted tokens, stopping at the first whose
    more likely tokens already hold p."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.full_like(flat, NEG)
    for r in range(flat.shape[0]):
        probs, order = flat[r].softmax(-1).sort(descending=True)
        before = (probs.cumsum(-1) - probs).tolist()
        for place, i in enumerate(order.tolist()):
            if place > 0 and before[place] >= p:
                break
            out[r, i] = flat[r, i]
    return out.reshape(logits.shape)


def top_p_scatter_sorted(logits: Tensor, p: float) -> Tensor:
    """The sorted logits filtered in sorted order, then scattered back into place."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    sorted_logits = logits.gather(-1, order)
    mass_before = probs.cumsum(-1) - probs
    drop = mass_before >= p
    drop[..., 0] = False
    filtered = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.empty_like(logits).scatter_(-1, order, filtered)


def top_p_ranks(logits: Tensor, p: float) -> Tensor:
    """How many tokens to keep per row, then each token's rank compared with that number."""
    probs, order = logits.softmax(-1).sort(-1, descending=True)
    n_keep = ((probs.cumsum(-1) - probs) < p).sum(-1, keepdim=True).clamp(min=1)
    rank = order.argsort(-1)  # the place of each token in the sorted order
    return torch.where(rank < n_keep, logits, torch.full_like(logits, NEG))


CASES = [
    BlindCase(
        CHECK,
        "cumsum_including_token",
        top_p_cumsum_with_token,
        "mistake",
        "I kept the tokens whose cumulative sum, themselves included, is <= p.",
    ),
    BlindCase(
        CHECK,
        "shift_the_wrong_way",
        top_p_shift_wrong_way,
        "mistake",
        "I shifted the remove mask to keep the crossing token, but one place left instead of "
        "right.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_logits",
        top_p_cumsum_of_logits,
        "mistake",
        "I sorted and summed the logits themselves, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "gather_instead_of_scatter",
        top_p_gather_back,
        "mistake",
        "I brought the mask back with keep_sorted.gather(-1, order) instead of scatter.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_dim_0",
        top_p_softmax_dim0,
        "mistake",
        "torch.softmax(logits, dim=0), which for a batch normalizes over the rows.",
    ),
    BlindCase(
        CHECK,
        "p_as_share_of_vocabulary",
        top_p_as_top_k,
        "mistake",
        "I kept the int(p * V) most likely tokens, the top p of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "renormalized_log_probs",
        top_p_renormalized,
        "mistake",
        "I return the log of the probabilities renormalized over the nucleus, not the logits.",
    ),
    BlindCase(
        CHECK,
        "cumsum_without_sorting",
        top_p_no_sort,
        "mistake",
        "I took the cumulative sum in the vocabulary's order; I forgot to sort by probability.",
    ),
    BlindCase(
        CHECK,
        "single_row_indexing",
        top_p_one_row,
        "mistake",
        "order[keep_sorted] flattens the ids of every row into one list, applied to all rows.",
    ),
    BlindCase(
        CHECK,
        "masked_fill_in_place",
        top_p_in_place,
        "mistake",
        "I used masked_fill_ on the logits I was given.",
    ),
    BlindCase(
        CHECK,
        "hugging_face_snippet",
        top_p_hf_snippet,
        "mistake",
        "I copied the usual snippet: remove where cumsum > p, shifted right by one, so a token "
        "is kept while the mass before it is <= p.",
    ),
    BlindCase(
        CHECK,
        "finfo_min_fill",
        top_p_fill_min,
        "mistake",
        "I filled with torch.finfo(dtype).min instead of -inf, to avoid NaNs.",
    ),
    BlindCase(
        CHECK,
        "sorted_logits_returned",
        top_p_sorted_output,
        "mistake",
        "I filtered the sorted logits and returned them, still in sorted order.",
    ),
    BlindCase(
        CHECK,
        "remove_mask_where",
        top_p_remove_mask,
        "correct",
        "A remove mask (mass before >= p) scattered back, then torch.where with a -inf tensor.",
    ),
    BlindCase(
        CHECK,
        "python_loop_rows",
        top_p_rows_loop,
        "correct",
        "Each row in a Python loop over the sorted tokens, stopping where the mass before "
        "reaches p.",
    ),
    BlindCase(
        CHECK,
        "filter_sorted_then_scatter",
        top_p_scatter_sorted,
        "correct",
        "The sorted logits filtered by the mass before each token, then scattered back.",
    ),
    BlindCase(
        CHECK,
        "keep_count_and_ranks",
        top_p_ranks,
        "correct",
        "The number of tokens to keep per row, compared with each token's rank (argsort of the "
        "order).",
    ),
]
