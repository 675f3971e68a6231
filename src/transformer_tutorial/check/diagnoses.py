"""Diagnoses shared by every check whose block contains the same step.

Masking: every check whose block holds a masked softmax asks ``masking_mistake`` which of the
usual mistakes (polarity, a -1e9 fill, NaN rows, zeroing after the softmax, the wrong axis) gives
the reader's weights. Losses over padded targets: every loss check asks which normalisation gives
a wrong value, or else which tell-tale relation it has to the right one (negative, a ratio equal
to tokens / sentences)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..attention import masked_softmax
from .tensors import close, expect_kept
from .verdict import POLARITY, Wrong, say

SCALE = {
    "scale-other": "your scores are divided by {divisor:.4g} = sqrt({square:.4g}) -- {names} -- "
    "instead of sqrt(d_k) = sqrt({dk}), the size of the query and key vectors "
    "(q.shape[-1]).",
    "scale-power-precedence": "your scores are divided by {divisor:.4g} = {expression}, not "
    "sqrt(d_k) = {root:.4g}: `** 1/2` is not a square root, since ** binds before / -- "
    "`s / d_k ** 1/2` is `(s / d_k) / 2`, and `s / (d_k ** 1/2)` is `s / (d_k / 2)`. Write "
    "`d_k ** 0.5` or `math.sqrt(d_k)`.",
}


def implied_divisor(weights: Tensor, scores: Tensor) -> float | None:
    """The number the reader divided the raw scores ``(..., T_q, T_k)`` by before the softmax,
    read from their weights (log w = scores / divisor + a constant per row), or None."""
    keep = weights > 1e-12
    if keep.sum() < 4:
        return None
    logw = torch.where(keep, weights.clamp_min(1e-300).log(), 0.0)
    rows = keep.any(-1, keepdim=True)
    n = keep.sum(-1, keepdim=True).clamp_min(1)
    centre = lambda t: torch.where(keep, t - (t * keep).sum(-1, keepdim=True) / n, 0.0)  # noqa: E731
    a, b = centre(scores.masked_fill(~keep, 0.0)), centre(logw)
    slope = float((a * b)[rows.expand_as(a)].sum() / (a * a)[rows.expand_as(a)].sum())
    return 1 / slope if slope > 0 else None


def scale_named(divisor: float, quantities: dict[str, float], dk: int) -> Wrong | None:
    """Name the quantity whose square root the reader divided by (one of ``quantities``), or
    what ``d_k ** 1/2`` gives (d_k / 2 or 2 d_k): only when that is the one reading of the
    divisor, so None when one of ``quantities`` itself (no root) is the divisor too."""
    near = lambda value: abs(value - divisor) < 1e-3 * divisor  # noqa: E731
    if any(near(value) for value in quantities.values()):
        return None  # a size taken whole: no mistake here names it, and nothing else is sure
    powers = [expression for value, expression in ((dk / 2, "d_k / 2"), (2 * dk, "2 d_k"))
              if near(value) and abs(value - math.sqrt(dk)) > 1e-6]  # fmt: skip
    names = [name for name, value in quantities.items() if near(math.sqrt(value))]
    if powers and not names:
        return Wrong.named(SCALE, "scale-power-precedence", divisor=divisor,
                           expression=powers[0], root=math.sqrt(dk))  # fmt: skip
    if names and not powers:
        return Wrong.named(SCALE, "scale-other", divisor=divisor, square=divisor**2,
                           names=" = ".join(names), dk=dk)  # fmt: skip
    return None


EVAL = {
    "dropout-in-eval": "{what} changes from one call to the next on the same input, in eval mode: "
    "something random still runs. Most often dropout is still on: use an nn.Dropout module "
    "(self.dropout), which model.eval() turns off -- F.dropout(x, p) is on unless you pass "
    "training=self.training. A layer built inside forward (new random weights at every call) "
    "or noise from torch.rand... does this too.",
}


RANDOM = {
    "random-output": "{what} changes from one call to the next on the same input: something "
    "random runs inside (a dropout the exercise does not ask for, or a tensor made with "
    "torch.rand...). The exercise's layer is deterministic: take it out, or give it p = 0.",
}


def _changed(first: object, second: object) -> bool:
    """Are two results of the same call on the same input different tensors?"""
    second = second[0] if isinstance(second, (tuple, list)) else second
    return (
        isinstance(first, Tensor)
        and isinstance(second, Tensor)
        and first.is_floating_point()
        and second.shape == first.shape
        and not torch.equal(first.nan_to_num(), second.nan_to_num())
    )


def random_output(run: Callable[[], Tensor], first: Tensor, what: str) -> Wrong | None:
    """The mistake when a second ``run()`` gives another result than ``first``."""
    return Wrong.named(RANDOM, "random-output", what=what) if _changed(first, run()) else None


def expect_same_twice(
    run: Callable[[], Tensor], what: str, inputs: dict[str, Tensor] | None = None
) -> Tensor:
    """``run()``'s result, after making sure a second call gives the same: a module in eval
    mode is deterministic, so a difference is dropout left on, unless the call changed one of
    the ``inputs`` it reads (named here), which is said first."""
    inputs = {name: t for name, t in (inputs or {}).items() if isinstance(t, Tensor)}
    originals = {name: t.clone() for name, t in inputs.items()}
    first = run()
    expect_kept(inputs, originals)
    if isinstance(first, Tensor) and first.is_floating_point() and _changed(first, run()):
        raise Wrong.named(EVAL, "dropout-in-eval", what=what)
    return first


MASKING = {
    "softmax-nan-rows": "your weights contain NaN where a query's keys are all masked: such a row "
    "is 0/0, whether a softmax of -inf only or a renormalisation by a row sum of 0, and no guard "
    "for it (or a guard that looks for such rows along another axis than the keys', which are the "
    "last: mask.any(dim=-1)). Give such rows all-zero weights (chapter 6).",
    "softmax-mask-times-inf": "your weights are NaN in every row that has a visible key: the "
    "mask was multiplied by -inf ((~mask) * -inf), and 0 * -inf is NaN, so the visible keys' "
    "scores become NaN. Fill instead: scores.masked_fill(~mask, float('-inf')).",
    "softmax-minus-1e9": "a query whose keys are all masked attends to them all uniformly, 1/T_k "
    "each: its scores reached the softmax all equal, as a large negative fill (-1e9) instead of "
    "-inf makes them (softmax(-1e9, ..., -1e9)), or as the row's scores set to a constant "
    "against the NaN without zeroing its weights afterwards. Give a row with no visible key "
    "all-zero weights (chapter 6).",
    "softmax-added-minus-1e4": "a query whose keys are all masked gets the plain softmax of "
    "its scores, weight on every masked key, where the book gives it all-zero weights; the other "
    "rows are right. Adding a large negative number to the masked scores (scores + (1 - mask) * "
    "-10000, BERT's additive mask) does this, and so does letting such a row see every key. Fill "
    "with -inf and give a row with no visible key all-zero weights (chapter 6).",
    "softmax-mask-squeezed": "your mask lost its axes of size 1 (a squeeze() without an axis?): "
    "a (B, 1, T_k) padding mask squeezed to (B, T_k) lines up with the scores' last two axes, "
    "(T_q, T_k), so sentence b's padding is applied to query b of every sentence. Keep the "
    "mask's axes, or squeeze only the axis you mean.",
    "softmax-missing": "your weights are the scores themselves: the softmax over the keys is "
    "missing (weights = softmax(scores), so that each query's weights are positive and sum to 1).",
    "softmax-flipped": "mask polarity: you masked the keys that may be seen -- {polarity}.",
    "softmax-ignores-mask": "the mask is not used: masked keys get weight above 0 (fill their "
    "scores with -inf before the softmax).",
    "softmax-then-zero": "you zero the masked weights after the softmax, so the rows no longer "
    "sum to 1: fill the masked scores with -inf before the softmax.",
    "softmax-times-mask": "a masked score becomes 0, not -inf, and still gets weight: "
    "multiplying the scores by the mask does this, and so does masked_fill(..., 0). Fill the "
    "masked scores with -inf.",
    "softmax-log": "your weights are log-probabilities, at most 0: their exp is the softmax "
    "over the keys. The weights are softmax(scores), not log_softmax(scores).",
    "softmax-sigmoid": "each of your weights is sigmoid(score), on its own: the weights of a "
    "query must compete and sum to 1, a softmax over the keys.",
    "softmax-wrong-axis": "your weights sum to 1 over axis {axis}, not over the keys (the last "
    "axis): the softmax ran over the wrong axis -- softmax(dim={axis}), or softmax(dim=-1) on "
    "scores laid out with the keys on another axis than the last ((T_k, T_q) before a "
    "transpose).",
    "softmax-size-one-axis": "every weight is 1: the softmax ran over an axis of size one (a "
    "score tensor (..., T_k, 1) before its squeeze(-1)). Squeeze the last axis of size one "
    "first, then take the softmax over the keys.",
    "softmax-divided-by-keys": "each row of your weights sums to 1 / (the number of keys it "
    "sees): the softmax's weights are divided by that number once more (a mean where the "
    "softmax already normalises).",
    "softmax-query-ignored": "every query gets the same weights, although the right weights "
    "differ from query to query: your scores do not depend on the query, or the query adds the "
    "same amount to each key's score, which the softmax cancels (for additive attention, a tanh "
    "on each side, w_v . (tanh(W_q q) + tanh(W_k k)), does this: the tanh takes the sum, "
    "tanh(W_q q + W_k k)).",
    "softmax-scaled-again": "your weights are the softmax of the right scores divided by "
    "{divisor:.4g}{root}: the scores are scaled once more (or once less) than the exercise asks.",
}

MASKING_MESSAGES = {
    "weights-rows-sum": "each row of your weights should sum to 1 over the keys it sees; yours "
    "sum to between {low:.4g} and {high:.4g}. A softmax divides each exp(score) by the sum of exp "
    "over the visible keys of its row: not by their number, nor by a sum over another axis, and "
    "nothing after it may rescale the weights (a division, a product with the mask, a second "
    "normalisation).",
    "masked-keys-weighted": "masked keys get weight above 0: fill their scores with -inf "
    "before softmax.",
    "weights-differ": "the weights differ from softmax over the keys (scores {shape}).",
    "weights-nan": "your weights contain NaN (scores {shape}), and not only in the rows of a "
    "query that sees no key.",
}


def fully_masked(mask: Tensor | None, shape: torch.Size) -> Tensor:
    """``(..., T_q, 1)``: True for the query rows that may see no key at all."""
    if mask is None:
        return torch.zeros(*shape[:-1], 1, dtype=torch.bool)
    return ~mask.expand(shape).any(-1, keepdim=True)


def masking_candidates(scores: Tensor, mask: Tensor | None) -> dict[str, list[Tensor]]:
    """What each masking mistake of ``MASKING`` makes of ``scores`` under ``mask``."""
    visible = scores if mask is None else scores.masked_fill(~mask, 0.0)  # the softmax left out
    found: dict[str, list[Tensor]] = {"softmax-wrong-axis": [], "softmax-missing": [visible]}
    if mask is not None:
        if fully_masked(mask, scores.shape).any():  # otherwise -1e9 is as good as -inf
            found["softmax-minus-1e9"] = [torch.softmax(scores.masked_fill(~mask, -1e9), -1)]
            found["softmax-added-minus-1e4"] = [torch.softmax(scores - 1e4 * ~mask, -1)]
        found |= {
            "softmax-flipped": [masked_softmax(scores, ~mask)],
            "softmax-ignores-mask": [torch.softmax(scores, dim=-1)],
            "softmax-then-zero": [torch.softmax(scores, dim=-1) * mask],
            "softmax-times-mask": [torch.softmax(scores * mask, dim=-1)],
        }
        squeezed = mask.squeeze()
        if squeezed.dim() < mask.dim() and _broadcasts(squeezed.shape, scores.shape):
            found["softmax-mask-squeezed"] = [masked_softmax(scores, squeezed)]
    for axis in range(scores.dim() - 1):
        found["softmax-wrong-axis"] += over_axis(scores, mask, axis)
    return found


def _broadcasts(shape: torch.Size, to: torch.Size) -> bool:
    """Does a tensor of ``shape`` broadcast to ``to`` without changing it?"""
    try:
        return torch.broadcast_shapes(shape, to) == to
    except RuntimeError:
        return False


def over_axis(scores: Tensor, mask: Tensor | None, axis: int) -> list[Tensor]:
    """The softmax over ``axis`` instead of the keys, masked before or not at all."""
    filled = scores if mask is None else scores.masked_fill(~mask, -math.inf)
    return [
        masked_softmax(scores.transpose(axis, -1), None).transpose(axis, -1),
        torch.softmax(filled, dim=axis).nan_to_num(),
    ]


def flipped_where_it_shows(weights: Tensor, scores: Tensor, mask: Tensor) -> bool:
    """Are ``weights`` the softmax under the flipped mask in every row where polarity shows
    (some keys visible, some not)? Rows with all keys hidden or all visible under one polarity
    are NaN or guarded, depending on how the reader guards them."""
    full = mask.expand(scores.shape)
    partial = (full.any(-1) & (~full).any(-1)).unsqueeze(-1).expand(scores.shape)  # (..., T_k)
    if not partial.any():
        return False
    flipped = masked_softmax(scores, ~mask)
    return bool(torch.isfinite(weights[partial]).all()) and close(
        weights[partial], flipped[partial]
    )


def masking_mistake(
    weights: Tensor, scores: Tensor, mask: Tensor | None, right_on: list | tuple = ()
) -> Wrong:
    """The one masking mistake that turns ``masked_softmax(scores, mask)`` into ``weights``,
    and would also give the right weights on the probes ``right_on`` ((scores, mask) pairs the
    reader got right), named; otherwise the difference, described. Raise what it returns."""
    nan = torch.isnan(weights)
    if nan.any():  # name NaN rows only where they are the one slip: elsewhere right
        if mask is not None and flipped_where_it_shows(weights, scores, mask):
            return Wrong.named(MASKING, "softmax-flipped", polarity=POLARITY)
        rows = nan.any(-1, keepdim=True)
        right = masked_softmax(scores, mask)
        if torch.equal(rows, fully_masked(mask, scores.shape).expand_as(rows)) and close(
            weights[~nan], right[~nan]
        ):
            return Wrong.named(MASKING, "softmax-nan-rows")
        times_inf = None if mask is None else scores + (~mask).to(scores.dtype) * float("-inf")
        if times_inf is not None and torch.equal(nan, times_inf.softmax(-1).isnan()):
            return Wrong.named(MASKING, "softmax-mask-times-inf")
        return Wrong.differs(MASKING_MESSAGES, "weights-nan", shape=tuple(scores.shape))
    candidates = masking_candidates(scores, mask)
    found = [k for k, values in candidates.items() if any(close(weights, v) for v in values)]
    found = [k for k in found if all(_right_there(k, *probe) for probe in right_on)]
    if len(found) == 1:
        axis = next(
            (a for a in range(scores.dim() - 1)
             if any(close(weights, v) for v in over_axis(scores, mask, a))),
            scores.dim() - 2,
        )  # fmt: skip
        return Wrong.named(MASKING, found[0], polarity=POLARITY, axis=axis - scores.dim())
    named = squashed_instead(weights, scores, mask)
    if named is not None:
        return Wrong.named(MASKING, named)
    if mask is not None and (weights[~mask.expand_as(weights)].abs() > 1e-9).any():
        return Wrong.differs(MASKING_MESSAGES, "masked-keys-weighted")
    return weights_relation(weights, scores, mask, bool(right_on)) or Wrong.differs(
        MASKING_MESSAGES, "weights-differ", shape=tuple(scores.shape)
    )


def weights_relation(
    weights: Tensor, scores: Tensor, mask: Tensor | None, some_right: bool
) -> Wrong | None:
    """What wrong weights show when no masking mistake gives them: rows that do not sum to 1
    (all ones, or 1 / the keys seen), one row for every query, or the right scores scaled (not
    when the reader got an earlier probe right: a scale would show there too)."""
    seen = visible_keys(scores, mask)
    rows = seen.any(-1)  # (..., T_q): the queries that see a key
    if weights.shape != scores.shape or not rows.any() or not torch.isfinite(weights).all():
        return None
    sums = weights.sum(-1)[rows]
    if not close(sums, torch.ones_like(sums)):
        if close(weights[seen], torch.ones_like(weights[seen])):
            return Wrong.named(MASKING, "softmax-size-one-axis")
        if close(sums * seen.sum(-1)[rows], torch.ones_like(sums)):
            return Wrong.named(MASKING, "softmax-divided-by-keys")
        return Wrong.differs(MASKING_MESSAGES, "weights-rows-sum", low=float(sums.min()),
                             high=float(sums.max()))  # fmt: skip
    right = masked_softmax(scores, mask)
    first, first_right = weights[..., :1, :], right[..., :1, :]
    if scores.shape[-2] > 1 and rows[..., 0].all() and close(weights, first.expand_as(weights)):
        if not close(right, first_right.expand_as(right)):
            return Wrong.named(MASKING, "softmax-query-ignored")
    divisor = None if some_right else implied_divisor(weights, scores)
    if divisor is not None and abs(divisor - 1) > 1e-3:
        if close(weights, masked_softmax(scores / divisor, mask), 1e-6):
            square = round(divisor**2)
            root = f" = sqrt({square})" if square > 1 and abs(divisor**2 - square) < 1e-3 else ""
            return Wrong.named(MASKING, "softmax-scaled-again", divisor=divisor, root=root)
    return None


def _right_there(key: str, scores: Tensor, mask: Tensor | None) -> bool:
    """Does masking mistake ``key`` give the right weights on ``scores`` under ``mask``?"""
    values = masking_candidates(scores, mask).get(key, [])
    return not values or any(close(v, masked_softmax(scores, mask)) for v in values)


def visible_keys(scores: Tensor, mask: Tensor | None) -> Tensor:
    """The keys each query may see, in the rows of the queries that see at least one."""
    seen = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand(scores.shape)
    return seen & ~fully_masked(mask, scores.shape)


def squashed_instead(weights: Tensor, scores: Tensor, mask: Tensor | None) -> str | None:
    """``"softmax-log"`` or ``"softmax-sigmoid"`` when, on every visible key of every query that
    sees one, ``weights`` are the log of the right weights or the sigmoid of the scores (what a
    reader puts at masked keys varies, so those are not compared)."""
    seen = visible_keys(scores, mask)
    if weights.shape != scores.shape or not seen.any():
        return None
    got, right = weights[seen], masked_softmax(scores, mask)[seen]
    if (got < -1e-6).any() and close(got.exp(), right):
        return "softmax-log"
    if close(got, torch.sigmoid(scores[seen])):
        return "softmax-sigmoid"
    return None


LOSS = {
    "loss-per-sentence": "you divide the summed loss by the number of sentences ({sentences}); "
    "divide by the number of real target tokens ({tokens}) -- yours is {tokens} / {sentences} "
    "= {ratio:.2f} times the mean.",
    "loss-mean-of-sentence-means": "you average each sentence's tokens, then the sentences: "
    "a short sentence then weighs as much as a long one. Average over all real target tokens "
    "at once ({tokens} here).",
    "loss-sum": "you sum over the {tokens} real target tokens; the loss is their mean, so that "
    "the step size does not grow with the batch.",
    "loss-pad-in-mean": "padding positions count in the mean: average over the real target "
    "tokens only ({tokens} of {positions} here; ignore_index=PAD_ID).",
    "loss-pad-in-sum": "the padding positions' losses are in the sum (divided by the {tokens} "
    "real tokens): padding must not count at all. Leave it out before summing "
    "(ignore_index=PAD_ID, or multiply by the mask of real tokens).",
    "loss-twice-divided": "you divide the mean over the real tokens by the number of sentences "
    "({sentences}) once more.",
    "loss-padding-only": "your loss is the mean over the padding positions only, not over the "
    "{tokens} real tokens: the mask is inverted. Keep the positions where target != PAD_ID.",
}

LOSS_MESSAGES = {
    "loss-negative": "the loss is {got:.6f}, negative: a cross-entropy -log p is never below "
    "0. Did the raw logits go into nll_loss (it expects log-probabilities: log_softmax first), "
    "or is the minus sign of -log p missing?",
    "loss-sign": "the loss is {got:.6f}, the right loss {want:.6f} with its sign turned: the "
    "minus of -log p is missing (a cross-entropy is never below 0).",
    "loss-ratio": "the loss is {got:.6f}, expected {want:.6f}: {ratio:.3f} times the right "
    "value{relation}.",
    "relation-tokens": ", the number of real tokens over the number of sentences ({tokens} / "
    "{sentences}) -- how is the sum divided?",
    "relation-positions": ", all positions over the real tokens ({positions} / {tokens}) -- is "
    "padding in the mean?",
}


def loss_normalisations(per_token: Tensor, real: Tensor) -> dict[str, list[Tensor]]:
    """The values each normalisation of ``MISTAKES`` gives, from the right per-token losses
    ``(B, T)`` (padding positions with their own loss) and the real-token mask ``(B, T)``."""
    B = per_token.shape[0]
    zeroed = per_token.masked_fill(~real, 0)
    return {
        "loss-per-sentence": [zeroed.sum() / B],
        "loss-mean-of-sentence-means": [(zeroed.sum(1) / real.sum(1)).mean()],
        "loss-sum": [zeroed.sum()],
        "loss-pad-in-mean": [zeroed.mean(), per_token.mean()],  # zeroed, or not even that
        "loss-twice-divided": [zeroed.sum() / real.sum() / B],
        "loss-pad-in-sum": [per_token.sum() / real.sum()],
        "loss-padding-only": [per_token[~real].mean()],
    }


def counts(real: Tensor) -> dict[str, int]:
    """The numbers the loss messages quote: tokens, sentences and positions."""
    tokens, sentences = int(real.sum()), real.shape[0]
    return {"tokens": tokens, "sentences": sentences, "positions": real.numel()}


def normalisation_named(got: Tensor, per_token: Tensor, real: Tensor) -> str | None:
    """The id of the one normalisation that gives ``got`` (None if none does, or several)."""
    found = [
        key
        for key, values in loss_normalisations(per_token, real).items()
        if any(close(got, value) for value in values)
    ]
    return found[0] if len(found) == 1 else None


def loss_described(got: float, want: float, real: Tensor) -> str:
    """A wrong loss value told by its relation to the right one: negative, or a ratio that
    equals one of the batch's counts (tokens / sentences, positions / tokens)."""
    n = counts(real)
    if got < 0 and abs(got + want) <= 1e-4 * max(abs(want), 1.0):
        return say(LOSS_MESSAGES, "loss-sign", got=got, want=want)
    if got < 0:
        return say(LOSS_MESSAGES, "loss-negative", got=got)
    ratio = got / want if want else float("inf")
    relation = ""
    for key, value in (
        ("relation-tokens", n["tokens"] / n["sentences"]),
        ("relation-positions", n["positions"] / n["tokens"]),
    ):
        if min(abs(ratio - value), abs(1 / ratio - value)) < 1e-4 * value:
            relation = say(LOSS_MESSAGES, key, **n)
    return say(LOSS_MESSAGES, "loss-ratio", got=got, want=want, ratio=ratio, relation=relation)


LENGTHS = {
    "lengths-mixed": "your code fails when the keys are not as long as the queries (T_q = {Tq}, "
    "T_k = {Tk}) and runs when they are: somewhere the queries' length stands where the keys' "
    "belongs. Look for scores laid out (T_k, T_q) instead of (T_q, T_k) (a transpose, or "
    "unsqueezes on the wrong axes when queries and keys are broadcast against each other), a "
    "length taken from the queries for the keys or values (a view with T = query.shape[1]), "
    "keys or values computed from the queries instead of from the keys and values "
    "(k_proj(query)), the heads split with the wrong pair of axes swapped (transpose(0, 2) "
    "where (B, T, h, d_k) needs transpose(1, 2)), or a library call that expects (T, B, D), "
    "such as nn.MultiheadAttention without batch_first=True.",
}


def call_attention(call: Callable, q: Tensor, k: Tensor, v: Tensor, m: Tensor | None) -> object:
    """``call(q, k, v, mask=m)``; when it raises, the lengths-mixed mistake if it is that."""
    try:
        return call(q, k, v, mask=m)
    except Exception as err:
        wrong = lengths_mixed(lambda *qkv: call(*qkv, mask=None), q, k, v)
        if wrong is None:
            raise
        raise wrong from err


def lengths_mixed(call: Callable, q: Tensor, k: Tensor, v: Tensor) -> Wrong | None:
    """For a call of the reader's attention that raised: name the mistake if it runs once the
    keys and values are cut to the queries' length (the sequence axis is -2)."""
    Tq, Tk = q.shape[-2], k.shape[-2]
    if Tk <= Tq:
        return None
    # without the mask, so that a mask error is not taken for it: fails at T_k, runs at T_q
    if _runs(call, q, k, v) or not _runs(call, q, k[..., :Tq, :], v[..., :Tq, :]):
        return None
    return Wrong.named(LENGTHS, "lengths-mixed", Tq=Tq, Tk=Tk)


def _runs(call: Callable, *args: Tensor) -> bool:
    try:
        call(*args)
    except Exception:
        return False
    return True


GRADIENTS = {
    "shared-submodule": "`{first}` and `{second}` are one module, not two: both places use the "
    "same weights, so training moves them together. Build each with its own constructor call "
    "(two nn.LayerNorm(d_model), not one assigned twice).",
    "gradient-detached": "the values are right, but no gradient reaches {name}: did you detach() "
    "it (or use .data, or torch.no_grad())? Training needs the gradient to flow back through it.",
}


def gradient_diagnosis(mine: torch.nn.Module, reference: torch.nn.Module, name: str,
                       grad: Tensor | None) -> Wrong | None:  # fmt: skip
    """Why the gradient with respect to ``name`` (``grad``, the reader's) differs when the values
    are right: two of the reader's submodules that are one object where the book's are two, or
    no gradient at all (a detach). None when neither explains it."""
    theirs = dict(mine.named_modules(remove_duplicate=False))
    ours = dict(reference.named_modules(remove_duplicate=False))
    names = [n for n in ours if n and n in theirs]
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            if theirs[first] is theirs[second] and ours[first] is not ours[second]:
                return Wrong.named(GRADIENTS, "shared-submodule", first=first, second=second)
    if grad is None or not grad.any():
        return Wrong.named(GRADIENTS, "gradient-detached", name=name)
    return None


MISTAKES = MASKING | LOSS | EVAL | RANDOM | SCALE | LENGTHS | GRADIENTS  # every mistake named here
MESSAGES = MASKING_MESSAGES | LOSS_MESSAGES  # and every difference they describe
