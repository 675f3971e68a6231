"""Checks of the decoder-only language model's sampling: the nucleus (top-p) filter (chapter 18)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..gpt import top_p_filter
from .engine import check
from .tensors import expect_dtype_kept, expect_tensor
from .verdict import Verdict, Wrong, confirmed, say

# --- the nucleus (top-p) filter ----------------------------------------------------------------

# Distributions over V = 6 tokens, written as probabilities (the logits are their logs), never in
# sorted order, so that a filter that forgets to put its mask back in the vocabulary's order shows.
# In "exact" every probability is exact in floating point (logits 0 and -inf), so that the mass
# before the fourth token is exactly p however the reader sums it.
_V = 6
_CASES = {
    "small": ([0.15, 0.30, 0.02, 0.45, 0.05, 0.03], 0.1),  # the most likely token alone
    "dominant": ([0.02, 0.90, 0.03, 0.02, 0.02, 0.01], 0.8),  # one token holds more than p
    "readable": ([0.15, 0.30, 0.02, 0.45, 0.05, 0.03], 0.6),  # 0.45 + 0.30 crosses 0.6
    "ties": ([0.1, 0.2, 0.4, 0.1, 0.1, 0.1], 0.65),  # 0.4 + 0.2 + one of four tied 0.1
    "exact": ([0.25, 0.0, 0.25, 0.25, 0.0, 0.25], 0.75),  # three tokens hold exactly p
    "all": ([0.3, 0.05, 0.2, 0.15, 0.1, 0.2], 1.0),  # p = 1: every token
}

MISTAKES = {
    "top-p-in-place": "your function changed the logits it was given (an in-place masked_fill_ or "
    "sort_?): sample_next passes the model's logits, which must stay as they were; return a new "
    "tensor.",
    "top-p-probabilities": "for {what}, you return probabilities, not logits: the filter returns "
    "the logits with those outside the nucleus set to -inf, and sample_next takes the softmax "
    "afterwards.",
    "top-p-zero-not-inf": "for {what}, your logits outside the nucleus are 0, not -inf: a logit of "
    "0 still has the probability e^0 / Z after the softmax, often more than the kept tokens. Set "
    "them to float('-inf').",
    "top-p-times-mask": "your filtered logits are NaN where a logit was already -inf (a token "
    "ruled out before, by top-k): -inf * 0 is NaN, so multiplying the logits by a mask cannot "
    "remove tokens. Set the logits outside the nucleus to -inf, "
    "logits.masked_fill(~keep, float('-inf')).",
    "top-p-whole-batch": "each row is right alone, but in a batch of 4 rows (p = {p:g}) the nuclei "
    "change: each row is its own distribution, so the softmax, the sort and the cumulative sum "
    "go along the last dimension (dim=-1).",
    "top-p-empty-row": "no token is left in the row: the most likely token is always in the "
    "nucleus (the smallest set whose probability reaches p has at least one token). Keep a token "
    "when the mass of the tokens *before* it is below p, or keep the first one always.",
    "top-p-sorted-output": "your output holds the kept logits in sorted order (most likely "
    "first): put each back at its own token's position, the original order, e.g. with scatter "
    "through the sort's indices.",
    "top-p-mask-not-scattered": "you keep the first positions of the vocabulary, the mask of the "
    "*sorted* logits applied to the unsorted ones: scatter the mask back to the original order "
    "through the sort's indices.",
    "top-p-ascending": "you keep the *least* likely tokens and drop the most likely one: sort in "
    "descending order, so that the nucleus is built from the most likely token down.",
    "top-p-drops-crossing": "you drop the token that crosses p (probability {crossing:g}): the "
    "tokens before it hold {before:g} < p, so the nucleus needs it. Keep a token when the mass "
    "*before* it is below p (the cumulative sum minus its own probability), not when the sum "
    "with it is.",
    "top-p-exactly-p": "you keep one token too many at the boundary: the {m} most likely tokens "
    "already hold exactly p = {p:g}, so the nucleus (the smallest set whose probability reaches "
    "p) ends there. Keep a token only while the mass before it is *below* p (<, not <=).",
    "top-p-minus-1e9": "for {what}, the tokens outside the nucleus get a large finite negative "
    "number ({fill}; -1e9 or torch.finfo(dtype).min do the same) instead of -inf: -inf takes a "
    "token out for good, while a finite number is still a logit that a temperature or an added "
    "bias can bring back (-1e9 / 1e9 = -1). Fill with float('-inf').",
    "top-p-dim-one": "the filter runs along dim 1, which is the vocabulary only for (B, V) "
    "logits: for (B, T, V) it runs over the positions. Use dim=-1 throughout (softmax, sort, "
    "cumsum, scatter).",
    "top-p-as-top-k": "you keep the ceil(p * V) most likely tokens, a fixed share of the "
    "vocabulary (top-k with k = p * V): top-p keeps the fewest most likely tokens whose "
    "probabilities add up to p, as many as that takes.",
    "top-p-no-softmax": "the mass is summed over the sorted logits, not over probabilities: "
    "sort and add up softmax(logits), whose sum is 1, and compare that with p.",
    "top-p-gather-unsort": "the kept mask goes back to the vocabulary's order with gather(-1, "
    "order) (or a scatter through order.argsort(), which comes to the same), which applies the "
    "sort's permutation once more instead of undoing it: scatter(-1, order, keep_sorted) puts "
    "each entry back where it came from.",
    "top-p-min-two": "you always keep at least two tokens: when the most likely token alone "
    "reaches p the nucleus is that one token, and sampling from it is greedy.",
    "top-p-softmax-axis": "the softmax runs over dim 0, the batch, not over the vocabulary: "
    "for a batch of one row every probability is then 1, and the nucleus is the first token. "
    "Each row is its own distribution: softmax(dim=-1).",
    "top-p-threshold-ties": "you keep every token tied with the last one needed ({n} tokens where "
    "{m} reach p): the nucleus is the smallest set, so it takes only as many of the tied tokens "
    "as it needs. Filter by position in the sorted order, not by a probability threshold.",
    "top-p-batch-count": "every row keeps as many tokens as the row of the batch that needs the "
    "most: the nucleus is each row's own, so count (or mask) row by row, keep_sorted = "
    "(cumsum - probs) < p on the sorted (B, V) probabilities, with no single count for the batch.",
    "top-p-kept-shifted": "for {what}, the logits you keep are shifted, each row by one "
    "constant (a log_softmax of the filtered logits, or another renormalisation): sampling from "
    "them is the same, but the filter returns the kept logits unchanged, "
    "logits.masked_fill(~kept, -inf), and leaves the softmax to the sampler.",
    "top-p-tail-mass": "you keep tokens while the mass before them is below 1 - p, reading p as "
    "the tail to cut: p is the nucleus's own mass, so keep them while it is below p.",
    "top-p-fixed-p": "your filter keeps the same tokens whatever p it is given: a p written "
    "into the code (such as 0.9) stands in place of the argument; use the p passed in.",
    "top-p-each-above-p": "you keep each token whose own probability is at least p (and the "
    "most likely one): the nucleus is the smallest set of most likely tokens whose probabilities "
    "add up to p -- sort them, take the cumulative sum, and keep tokens until it reaches p.",
    "top-p-relative": "you keep the tokens at least (1 - p) times as likely as the best one, a "
    "threshold relative to the maximum: top-p sums the sorted probabilities and keeps the most "
    "likely tokens until their mass reaches p.",
    "top-p-overflow": "for {what}, no token is kept (or the logits are NaN): exp() of logits this "
    "large overflows to inf, and inf / inf is NaN; or the probabilities are exp(logits) never "
    "divided by their sum, which are no distribution (ordinary logits then fail too). The softmax "
    "must subtract the row's maximum first -- logits.softmax(-1) does -- and logits of any size "
    "are valid.",
}

MESSAGES = {
    "small": "probabilities {probs}, p = {p}",
    "readable": "probabilities {probs}, p = {p}",
    "dominant": "a single dominant token, probabilities {probs}, p = {p}",
    "ties": "tied probabilities {probs}, p = {p}",
    "exact": "probabilities {probs} (logits -inf for the zeros, as after top-k), p = {p}",
    "all": "probabilities {probs}, p = 1",
    "batch": "a batch of 4 rows, p = {p:g}",
    "large": "logits 1000 larger (the same probabilities {probs}), p = {p}",
    "random": "random logits of shape (2, 3, {V}), p = {p:g}",
    "for-row": "for {what}: {said}",
    "for-row-of-batch": "for {what} (row {i}): {said}",
    "top-p-keeps": "you keep tokens {ids}; the nucleus is tokens {right}.",
    "top-p-not-float": "return the filtered logits as floats, not {dtype}.",
    "top-p-nan": "your filtered logits contain NaN; a token outside the nucleus gets the logit "
    "-inf, and every other logit stays as it was.",
    "top-p-kept-changed": "for {what}, the tokens you keep should keep their logits as they were "
    "(the softmax afterwards renormalises them); yours are changed.",
}


_EXP_LIMIT = 700.0  # logits above this overflow a bare exp() (float64's limit is about 709.8)


def _logits(probs: list[float]) -> Tensor:
    """Logits ``(1, V)`` whose softmax is ``probs``: a batch of one row, as sample_next passes.
    A probability of 0 is the logit -inf."""
    return torch.tensor([probs], dtype=torch.float64).log()


def _show(probs: Tensor) -> str:
    return "(" + ", ".join(f"{q:g}" for q in probs.tolist()) + ")"


def _overflows(fn: Callable, logits: Tensor, p: float) -> bool:
    """Are ``logits`` large enough to overflow a bare exp(), and does the reader's filter keep a
    token in every row, without NaN, once they are shifted down to ordinary values (the same
    probabilities)? Only then is the overflow what went wrong."""
    if logits.max() <= _EXP_LIMIT:
        return False
    out = fn(logits - logits.amax(-1, keepdim=True), p)
    if not isinstance(out, Tensor) or out.shape != logits.shape or not out.is_floating_point():
        return False
    out = out.detach().to(torch.float64)
    return not torch.isnan(out).any() and bool((out > float("-inf")).any(-1).all())


def _call(fn: Callable, logits: Tensor, p: float, what: str = "") -> Tensor:
    """The reader's filtered logits in float64; their input must come back untouched."""
    given = logits.clone()
    out = expect_tensor(fn(given, p), "the filtered logits", tuple(logits.shape))
    if not torch.equal(given, logits):
        raise Wrong.named(MISTAKES, "top-p-in-place")
    if out.is_floating_point() is False:
        raise Wrong.differs(MESSAGES, "top-p-not-float", dtype=out.dtype)
    out = out.detach().to(torch.float64)
    if torch.isnan(out).any():
        if _overflows(fn, logits, p):  # a bare exp() gave inf, and inf / inf NaN
            raise Wrong.named(MISTAKES, "top-p-overflow", what=what)
        if bool((logits[torch.isnan(out)] == float("-inf")).all()):  # -inf * 0
            raise Wrong.named(MISTAKES, "top-p-times-mask")
        raise Wrong.differs(MESSAGES, "top-p-nan")
    return out


def _same_nucleus(kept: Tensor, want: Tensor, probs: Tensor, width: int = _V) -> bool:
    """Rows of ``width`` keep tokens of the same probabilities (any of tied tokens will do)."""
    rows = zip(kept.reshape(-1, width), want.reshape(-1, width), probs.reshape(-1, width),
               strict=True)  # fmt: skip
    for k, w, q in rows:
        a, b = q[k].sort().values, q[w].sort().values
        if a.shape != b.shape or not torch.allclose(a, b, rtol=0, atol=1e-12):
            return False
    return True


def _row_mistake(kept: Tensor, want: Tensor, probs: Tensor, p: float, out: Tensor, logits) -> Wrong:
    """Name what went wrong in one row: ``kept`` and ``want`` are ``(V,)`` bool."""
    n, m = int(kept.sum()), int(want.sum())
    order = probs.argsort(descending=True, stable=True)  # most likely first
    before = probs[order].cumsum(0) - probs[order]  # mass of the more likely tokens
    if n == 0:
        return Wrong.named(MISTAKES, "top-p-empty-row")
    finite = out.isfinite()
    if n == m and torch.equal(finite, torch.arange(_V) < m):
        if torch.allclose(out[:m], logits[order][:m]):
            return Wrong.named(MISTAKES, "top-p-sorted-output")
        return Wrong.named(MISTAKES, "top-p-mask-not-scattered")
    least = probs.argsort(stable=True)[:n]  # the n least likely
    if not kept[order[0]] and torch.allclose(probs[kept].sort().values, probs[least].sort().values):
        return Wrong.named(MISTAKES, "top-p-ascending")
    ranked = probs[order]  # (V,) most likely first
    mine = probs[kept].sort(descending=True).values
    is_top = torch.allclose(mine, ranked[:n], rtol=0, atol=1e-12)  # the n most likely, ties aside
    if n == m - 1 and is_top:
        crossing, mass = float(ranked[n]), float(before[n])
        return Wrong.named(MISTAKES, "top-p-drops-crossing", crossing=crossing, before=mass)
    if n > m and is_top and abs(float(before[m]) - p) < 1e-9:
        return Wrong.named(MISTAKES, "top-p-exactly-p", m=m, p=p)
    if n > m and bool((probs[kept & ~want] == probs[want].min()).all()):
        return Wrong.named(MISTAKES, "top-p-threshold-ties", n=n, m=m)
    ids = torch.nonzero(kept).flatten().tolist()
    right = torch.nonzero(want).flatten().tolist()
    return Wrong.differs(MESSAGES, "top-p-keeps", ids=ids, right=right)


# --- what each named mistake computes: a name is said only if its candidate reproduces the -------
# --- reader's nucleus on every probe, the ones they got right included -----------------------


def _nucleus(logits: Tensor, p: float, descending: bool = True, below: bool = True,
             with_self: bool = False, force_first: bool = True, scatter: bool = True,
             flat: bool = False, edge: float = 0.0, axis: int = -1) -> Tensor:  # fmt: skip
    """The kept tokens ``(..., V)`` of the book's rule or of one variation of it (``edge``
    moves p by a rounding error: a mass summed in another order lands on either side)."""
    shape = logits.shape
    if flat:  # the whole batch as one distribution
        logits = logits.reshape(1, -1)
    probs, order = logits.softmax(axis).sort(dim=-1, descending=descending, stable=True)
    mass = probs.cumsum(-1) - (0 if with_self else probs)  # (..., V)
    keep = mass < p + edge if below else mass <= p + edge
    if force_first:
        keep[..., 0] = True
    if scatter:
        keep = torch.zeros_like(keep).scatter(-1, order, keep)
    return keep.reshape(shape)


def _threshold(logits: Tensor, p: float) -> Tensor:
    """Every token at least as likely as the least likely one of the nucleus."""
    probs = logits.softmax(-1)
    least = probs.masked_fill(~_nucleus(logits, p), 2.0).amin(-1, keepdim=True)
    return probs >= least


def _variants(**fixed: bool) -> list[Callable[[Tensor, float], Tensor]]:
    """The rule with ``fixed`` changed, each way of writing the rest (the first token forced or
    not, < or <=) as a separate variant."""
    return [
        lambda x, p, f=f, b=b, e=e: _nucleus(x, p, force_first=f, below=b, edge=e, **fixed)
        for f in (True, False)
        for b in (True, False)
        for e in (0.0, -1e-9, 1e-9)
    ]


def _sorted_rule(x: Tensor, p: float, values: Tensor, unsort: str = "scatter",
                 keep: int = 1) -> Tensor:  # fmt: skip
    """The book's rule on ``values`` (the probabilities, or what a reader sums instead), its mask
    put back by ``unsort`` (``"scatter"``, or ``"gather"`` with the sort order), the first
    ``keep`` tokens kept whatever their mass."""
    sorted_values, order = values.sort(-1, descending=True)
    keep_sorted = (sorted_values.cumsum(-1) - sorted_values) < p
    keep_sorted[..., :keep] = True
    if unsort == "gather":
        return keep_sorted.gather(-1, order)
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def _first_not_reset(x: Tensor, p: float) -> Tensor:
    """The book's rule, but the most likely token kept only while its own probability is below
    p: a removal mask shifted right by one whose first entry is not set back to False."""
    probs, order = x.softmax(-1).sort(dim=-1, descending=True, stable=True)
    keep = probs.cumsum(-1) - probs < p
    keep[..., 0] = probs[..., 0] < p
    return torch.zeros_like(keep).scatter(-1, order, keep)


def _along_dim_one(x: Tensor, p: float) -> Tensor:
    """The book's rule along dim 1 (the vocabulary only when x is (B, V))."""
    moved = x.transpose(1, -1) if x.dim() > 2 else x
    keep = _sorted_rule(moved, p, moved.softmax(-1))
    return keep.transpose(1, -1) if x.dim() > 2 else keep


def _top_k_share(x: Tensor, p: float) -> Tensor:
    """The ceil(p * V) most likely tokens."""
    k = max(1, math.ceil(p * x.shape[-1]))
    return x >= x.topk(k, dim=-1).values[..., -1:]  # ties with the k-th kept too


def _batch_count(x: Tensor, p: float) -> Tensor:
    """Every row keeps the most tokens any row of the batch needs."""
    n = int(_nucleus(x, p).reshape(-1, x.shape[-1]).sum(-1).max())
    order = x.sort(dim=-1, descending=True, stable=True).indices
    return torch.zeros_like(x, dtype=torch.bool).scatter(-1, order[..., :n], True)


def _each_above_p(x: Tensor, p: float) -> Tensor:
    """Every token whose own probability is at least p, and the most likely one."""
    probs = x.softmax(-1)
    return (probs >= p).scatter(-1, probs.argmax(-1, keepdim=True), True)


def _relative(x: Tensor, p: float) -> Tensor:
    """The tokens at least (1 - p) times as likely as the most likely one."""
    probs = x.softmax(-1)
    return probs >= (1 - p) * probs.amax(-1, keepdim=True)


_CANDIDATES: dict[str, list[Callable[[Tensor, float], Tensor]]] = {
    "top-p-batch-count": [_batch_count],
    "top-p-relative": [_relative],
    "top-p-each-above-p": [_each_above_p],
    "top-p-dim-one": [_along_dim_one],
    "top-p-as-top-k": [_top_k_share],
    "top-p-no-softmax": [lambda x, p: _sorted_rule(x, p, x)],
    "top-p-gather-unsort": [lambda x, p: _sorted_rule(x, p, x.softmax(-1), unsort="gather")],
    "top-p-min-two": [lambda x, p: _sorted_rule(x, p, x.softmax(-1), keep=2)],
    "top-p-drops-crossing": _variants(with_self=True),
    "top-p-empty-row": [*_variants(with_self=True), _first_not_reset],
    "top-p-exactly-p": [lambda x, p: _nucleus(x, p, below=False)],
    "top-p-ascending": _variants(descending=False),
    "top-p-mask-not-scattered": [lambda x, p: _nucleus(x, p, scatter=False)],
    "top-p-sorted-output": [lambda x, p: _nucleus(x, p, scatter=False)],
    "top-p-threshold-ties": [_threshold],
    "top-p-whole-batch": _variants(flat=True),
    "top-p-softmax-axis": _variants(axis=0),
    "top-p-tail-mass": [lambda x, p: _nucleus(x, 1 - p)],
    "top-p-fixed-p": [lambda x, p, fixed=fixed: _nucleus(x, fixed) for fixed in (0.9, 0.95, 0.8)],
}


# the rules whose message needs no number from a row: tried on every probe when no row's
# mistake reproduces them all
_SAID_ALONE = ("top-p-softmax-axis", "top-p-ascending", "top-p-mask-not-scattered",
               "top-p-no-softmax", "top-p-gather-unsort", "top-p-min-two", "top-p-dim-one",
               "top-p-as-top-k", "top-p-batch-count", "top-p-relative", "top-p-each-above-p",
               "top-p-tail-mass", "top-p-fixed-p")  # fmt: skip


def _reproduces(mistake: str | None, probes: list[tuple[Tensor, float, Tensor]]) -> bool:
    """Does the candidate of ``mistake`` keep what the reader kept on every probe?"""
    if mistake not in _CANDIDATES:
        return mistake is not None  # named by the values returned, not by the nucleus
    flat = mistake == "top-p-whole-batch"  # one distribution: ties across rows
    sorted_out = mistake == "top-p-sorted-output"  # the kept logits moved to the front
    return any(
        all(
            _same_nucleus(
                kept,
                rule(x, p) & (x.isfinite() | sorted_out),
                x.softmax(-1),
                x.numel() if flat else _V,
            )  # fmt: skip
            for x, p, kept in probes
        )
        for rule in _CANDIDATES[mistake]
    )


def _number(value: Tensor) -> str:
    """-1e9 as a reader writes it (not -1e+09)."""
    return f"{float(value):g}".replace("e+0", "e").replace("e+", "e")


def _judge(fn: Callable, logits: Tensor, p: float, what: str, probes: list) -> list[Wrong]:
    """Compare the reader's filter with the book's on ``logits (..., V)``: what is wrong, one
    ``Wrong`` per failing row (empty when the filter is right); the probe joins ``probes``."""
    out = _call(fn, logits, p, what)
    probes.append((logits, p, out > float("-inf")))
    want = top_p_filter(logits, p).isfinite()  # (..., V)
    huge = out.isfinite() & (out <= -1e3)  # a large negative number instead of -inf
    if not want.all() and torch.equal(huge, ~want) and torch.equal(out[want], logits[want]):
        return [Wrong.named(MISTAKES, "top-p-minus-1e9", what=what, fill=_number(out[~want].max()))]
    probs = logits.softmax(-1)
    kept = out > float("-inf")  # (..., V)
    if not kept.any(-1).all() and _overflows(fn, logits, p):  # NaN compared: all dropped
        return [Wrong.named(MISTAKES, "top-p-overflow", what=what)]
    nucleus = probs * want / (probs * want).sum(-1, keepdim=True)  # renormalised inside
    if not want.all() and kept.all():  # nothing was set to -inf
        inside = out.masked_fill(~want, 0.0)
        if any(torch.allclose(inside, q.masked_fill(~want, 0.0)) for q in (probs, nucleus)):
            return [Wrong.named(MISTAKES, "top-p-probabilities", what=what)]
        if torch.equal(out.masked_fill(want, 0.0), torch.zeros_like(out)):
            return [Wrong.named(MISTAKES, "top-p-zero-not-inf", what=what)]
    if not _same_nucleus(kept, want, probs):
        rows = list(zip(kept.reshape(-1, _V), want.reshape(-1, _V), probs.reshape(-1, _V),
                        out.reshape(-1, _V), logits.reshape(-1, _V), strict=True))  # fmt: skip
        wrongs = []
        for i, (k, w, q, o, x) in enumerate(rows):
            if not _same_nucleus(k, w, q):
                key, row = ("for-row-of-batch", {"i": i}) if len(rows) > 1 else ("for-row", {})
                inner = _row_mistake(k, w, q, p, o, x)
                ids = torch.nonzero(k).flatten().tolist()
                right = torch.nonzero(w).flatten().tolist()
                plain = say(MESSAGES, "top-p-keeps", ids=ids, right=right)
                wrongs.append(Wrong(say(MESSAGES, key, what=what, said=str(inner), **row),
                                    inner.mistake,
                                    say(MESSAGES, key, what=what, said=plain, **row)))  # fmt: skip
        return wrongs
    if torch.allclose(out[kept], probs[kept]) or torch.allclose(out[kept], nucleus[kept]):
        return [Wrong.named(MISTAKES, "top-p-probabilities", what=what)]
    inside = torch.where(kept, out - logits, 0.0)  # (..., V)
    shift = inside.sum(-1, keepdim=True) / kept.sum(-1, keepdim=True)
    if not torch.allclose(torch.where(kept, inside - shift, 0.0), torch.zeros_like(out), atol=1e-5):
        return [Wrong.differs(MESSAGES, "top-p-kept-changed", what=what)]
    rounding = 1e-4 * (1 + float(logits[kept].abs().amax()))  # float32's, at this magnitude
    if bool((shift.abs() > rounding).any()):  # a constant per row, beyond rounding
        return [Wrong.named(MISTAKES, "top-p-kept-shifted", what=what)]
    return []


@check("top-p filter", call="fn(logits, p)")
def check_top_p(fn: Callable[[Tensor, float], Tensor]) -> Verdict:
    """``fn(logits, p) -> filtered``, logits ``(..., V)``: the tokens outside the nucleus (the
    smallest set of most likely tokens whose probability reaches ``p``) get the logit -inf; the
    others keep theirs, in the original order."""
    rows, wrongs, probes = [], [], []  # every probe runs before a mistake is named
    for name, (probs, p) in _CASES.items():
        logits = _logits(probs)
        shown = _show(logits.softmax(-1)[0])
        try:
            wrongs += _judge(fn, logits, p, say(MESSAGES, name, probs=shown, p=f"{p:g}"), probes)
        except Wrong as nan:  # -inf * 0: a mistake seen in the rows before names it better
            zeros = {w.mistake for w in wrongs} == {"top-p-zero-not-inf"}  # and now NaN: x * 0
            if nan.mistake == "top-p-times-mask" and wrongs and not zeros:
                raise confirmed(wrongs, lambda mistake: _reproduces(mistake, probes)) from nan
            raise
        rows.append(logits)
    batch = torch.cat(rows[:4])  # (4, V): four different distributions at once
    for p in (0.55, 0.85):  # away from every cumulative sum of the four rows
        alone = torch.cat([_call(fn, row, p).isfinite() for row in batch.split(1)])
        together = _call(fn, batch, p).isfinite()
        right = top_p_filter(batch, p).isfinite()
        found = _judge(fn, batch, p, say(MESSAGES, "batch", p=p), probes)
        if _same_nucleus(alone, right, batch.softmax(-1)) and not torch.equal(alone, together):
            found = [Wrong(str(Wrong.named(MISTAKES, "top-p-whole-batch", p=p)),
                           "top-p-whole-batch", found[0].plain or str(found[0]))]  # fmt: skip
        wrongs += found
    large = rows[2] + 1000.0  # "readable", with logits too large for a bare exp()
    shown = _show(large.softmax(-1)[0])
    wrongs += _judge(fn, large, 0.6, say(MESSAGES, "large", probs=shown, p="0.6"), probes)
    g = torch.Generator().manual_seed(0)
    many = 2.0 * torch.randn(2, 3, _V, generator=g, dtype=torch.float64)  # (2, 3, V)
    for p in (0.3, 0.7, 0.95):
        wrongs += _judge(fn, many, p, say(MESSAGES, "random", V=_V, p=p), probes)
    if wrongs:
        wrong = confirmed(wrongs, lambda mistake: _reproduces(mistake, probes))
        if wrong.mistake is None:  # no row's mistake explains every probe: does one rule?
            found = [m for m in _SAID_ALONE if _reproduces(m, probes)]
            if len(found) == 1:
                raise Wrong.named(MISTAKES, found[0])
        raise wrong
    expect_dtype_kept(fn(many.clone(), 0.7), many, "the filtered logits")
    return (
        "the token that crosses p is kept, exactly p ends the nucleus, ties, a dominant "
        "token, p = 1, -inf outside, batches and the original order are right."
    )
