"""Mistakes in the nucleus (top-p) filter (chapter 18), written the ways a reader writes it:
sort, cumulative sum, a mask, and the mask put back in the vocabulary's order."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial import check

from . import Correct, Mistake

CHECK = check.check_top_p


def _nucleus(rule: str = "before<", *, first: bool = True, descending: bool = True):
    """A reader's sorted-mask filter; ``rule`` decides which sorted tokens are kept."""

    def fn(logits: Tensor, p: float) -> Tensor:
        probs, order = logits.softmax(-1).sort(dim=-1, descending=descending)  # (..., V)
        total = probs.cumsum(-1)  # (..., V)
        keep = {
            "before<": total - probs < p,
            "before<=": total - probs <= p,
            "total<": total < p,
        }[rule]
        if first:
            keep[..., 0] = True
        kept = torch.zeros_like(keep).scatter(-1, order, keep)  # back to the original order
        return logits.masked_fill(~kept, float("-inf"))

    return fn


def _outside(value: str):
    """The right nucleus, but the wrong thing outside it (or inside it)."""

    def fn(logits: Tensor, p: float) -> Tensor:
        probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
        keep = probs.cumsum(-1) - probs < p
        kept = torch.zeros_like(keep).scatter(-1, order, keep)
        if value == "zero":
            return logits.masked_fill(~kept, 0.0)
        return logits.softmax(-1).masked_fill(~kept, 0.0)  # "probabilities"

    return fn


def _order(how: str):
    """The right sorted mask, not put back in the vocabulary's order."""

    def fn(logits: Tensor, p: float) -> Tensor:
        values, order = logits.sort(dim=-1, descending=True)
        probs = values.softmax(-1)
        keep = probs.cumsum(-1) - probs < p
        if how == "sorted":  # the sorted logits come back, in sorted order
            return values.masked_fill(~keep, float("-inf"))
        return logits.masked_fill(~keep, float("-inf"))  # the sorted mask on unsorted logits

    return fn


def _threshold(logits: Tensor, p: float) -> Tensor:
    """Finds the probability of the token that crosses p and keeps every token at least as
    likely: ties at the cut all come in."""
    probs = logits.softmax(-1)
    ranked = probs.sort(dim=-1, descending=True).values
    crossing = ((ranked.cumsum(-1) - ranked) < p).sum(-1, keepdim=True) - 1  # (..., 1)
    cut = ranked.gather(-1, crossing)
    return logits.masked_fill(probs < cut, float("-inf"))


def _whole_batch(logits: Tensor, p: float) -> Tensor:
    """Sorts the whole batch as one distribution: rows share one nucleus."""
    flat = logits.reshape(-1)
    probs, order = (flat.softmax(-1) * logits.shape[0]).sort(descending=True)
    probs = probs / probs.sum()
    keep = probs.cumsum(-1) - probs < p
    keep[0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~kept.reshape(logits.shape), float("-inf"))


def _in_place(logits: Tensor, p: float) -> Tensor:
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(-1) - probs < p
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill_(~kept, float("-inf"))


MISTAKES = [
    Mistake(CHECK, "top-p-drops-crossing", _nucleus("total<"), "drop the token that crosses p"),
    Mistake(CHECK, "top-p-empty-row", _nucleus("total<", first=False), "no token is left"),
    Mistake(CHECK, "top-p-exactly-p", _nucleus("before<="), "exactly p"),
    Mistake(CHECK, "top-p-ascending", _nucleus(descending=False), "least* likely"),
    Mistake(CHECK, "top-p-zero-not-inf", _outside("zero"), "are 0, not -inf"),
    Mistake(CHECK, "top-p-probabilities", _outside("probs"), "probabilities, not logits"),
    Mistake(CHECK, "top-p-sorted-output", _order("sorted"), "in sorted order"),
    Mistake(CHECK, "top-p-mask-not-scattered", _order("mask"), "scatter the mask back"),
    Mistake(CHECK, "top-p-threshold-ties", _threshold, "tied"),
    Mistake(CHECK, "top-p-whole-batch", _whole_batch, "dim=-1"),
    Mistake(CHECK, "top-p-in-place", _in_place, "changed the logits it was given"),
]


def _by_loops(logits: Tensor, p: float) -> Tensor:
    """Row by row in plain Python: add tokens, most likely first, until the sum reaches p."""
    out = torch.full_like(logits, float("-inf"))
    flat, rows = out.reshape(-1, logits.shape[-1]), logits.reshape(-1, logits.shape[-1])
    for row, logit in zip(flat, rows, strict=True):
        probs = logit.softmax(-1).tolist()
        total = 0.0
        for v in sorted(range(len(probs)), key=lambda i: -probs[i]):
            row[v] = logit[v]
            total += probs[v]
            if total >= p:
                break
    return out


def _ascending_tail(logits: Tensor, p: float) -> Tensor:
    """Sorted ascending, remove the least likely tokens while their mass is at most 1 - p."""
    probs, order = logits.softmax(-1).sort(dim=-1)
    remove = probs.cumsum(-1) <= 1 - p
    remove[..., -1] = False
    return logits.masked_fill(torch.zeros_like(remove).scatter(-1, order, remove), float("-inf"))


def _log_softmax_float32(logits: Tensor, p: float) -> Tensor:
    """In float32, returning log-probabilities: the logits shifted by a constant per row."""
    logp = logits.float().log_softmax(-1)
    probs, order = logp.exp().sort(dim=-1, descending=True)
    before = torch.cat([torch.zeros_like(probs[..., :1]), probs.cumsum(-1)[..., :-1]], -1)
    kept = torch.zeros_like(before, dtype=torch.bool).scatter(-1, order, before < p)
    return logp.masked_fill(~kept, float("-inf"))


MISTAKES += [
    # accepted until B29; the exercise returns the kept logits unchanged
    Mistake(
        CHECK,
        "top-p-log-softmax-float32",
        _log_softmax_float32,
        "each row by one constant",
        mistake="top-p-kept-shifted",
    ),  # fmt: skip
]

CORRECT = [
    Correct(CHECK, "top-p-by-loops", _by_loops),
    Correct(CHECK, "top-p-ascending-tail", _ascending_tail),
]
