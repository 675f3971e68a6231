"""Attention-pooling checks: Nadaraya-Watson kernel regression (chapter 5)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..attention_pooling import nadaraya_watson
from .engine import check, describe
from .tensors import NAMES as TENSOR_NAMES
from .tensors import close, expect_kept, expect_pair_order, expect_tensor, unpacks_to
from .verdict import Verdict, Wrong

MISTAKES = {
    "nw-density-constant": "your kernel divides (q - k)^2 by sqrt(2 pi) * width, the normal "
    "density's constant, which stands outside the exponent and cancels in the softmax; the "
    "exponent is -(q - k)^2 / (2 width^2).",
    "nw-not-normalised": "each row of your weights has the right shape but the wrong total "
    "(the rows sum to {sums}): the kernel values (a Gaussian density, or exp of the scores) are "
    "not divided by their row's sum. The weights are the softmax of the scores over the keys, "
    "so that each row sums to 1.",
    "nw-unweighted-average": "every value gets the same weight 1 / T_k: that is average pooling. "
    "Weight each value by the softmax of the kernel scores, so near keys count more.",
    "nw-softmax-over-queries": "the weights sum to 1 over the queries (a softmax over axis 0, or "
    "over the last axis of differences laid out (T_k, T_q) and transposed afterwards): each "
    "query's weights are a distribution over the keys, the last axis.",
    "nw-sign": "the sign of the score is flipped: far keys get the most weight. The score is "
    "-(q - k)^2 / (2 width^2), largest (0) when the key equals the query.",
    "nw-no-half": "the 2 of 2 width^2 is missing: the score is -(q - k)^2 / (2 width^2); yours "
    "acts like a kernel 1.414 times narrower.",
    "nw-no-square": "the distance is not squared: the Gaussian score is -(q - k)^2 / (2 width^2); "
    "-|q - k| / ... is another kernel (Laplace's, exercise 1).",
    "nw-width-multiplies": "the width multiplies the squared distance; it divides it: "
    "-(q - k)^2 / (2 width^2), so a larger width means a wider kernel.",
    "nw-width-not-squared": "the width is not squared: divide by 2 width^2, not 2 width (the two "
    "agree only at width 1).",
    "nw-two-squared": "the scores are divided by 4 width^2, not 2 width^2: the 2 squared with the "
    "width, (2 width)^2, or the half taken twice (0.5 * (q - k)^2 / (2 width^2)); the denominator "
    "is 2 width^2, 2 * width**2.",
    "nw-width-detached": "the predictions do not depend on the width through autograd: fit_width "
    "could not learn it.",
}

MESSAGES = {
    "nw-other-divisor": "your weights are the softmax of -(q - k)^2 / {divisor}; with width "
    "{width} the book's divide by 2 width^2 = {want}.",
    "nw-not-a-pair": "return a pair (predictions (T_q,), weights (T_q, T_k)), as the book does.",
    "nw-row-sums": "each row of weights should sum to 1 over the keys; the sums are {sums}.",
    "nw-predictions-differ": "the weights are right but the predictions are not: f(q) = sum_i "
    "alpha(q, k_i) v_i, the weighted sum of the values (width {width}).",
    "nw-weights-differ": "with width {width} the weights of query {query} should be {want}.",
    "nw-rows-per-query-differ": "with one row of keys per query (keys {shape}) query i must use "
    "row i of the keys and values only; use queries.unsqueeze(-1) - keys.",
    "rows-per-query-raised": "with one row of keys per query (keys {shape} = (T_q, T_k), as "
    "leave_one_out gives them): {what} -- each query uses its own row of keys and values: the "
    "differences queries.unsqueeze(-1) - keys and the weighted sum (weights * values).sum(-1) "
    "work for both shapes; weights @ values does not.",
}


def _predictions_and_weights(result: object, T_q: int, T_k: int) -> tuple[Tensor, Tensor]:
    if not unpacks_to(result, 2):
        raise Wrong.differs(MESSAGES, "nw-not-a-pair")
    expect_pair_order(result, ("predictions", "weights"), ((T_q,), (T_q, T_k)))
    keys = {TENSOR_NAMES["t-k-summed"]: T_k}
    predictions = expect_tensor(result[0], TENSOR_NAMES["predictions"], (T_q,), keys)
    weights = expect_tensor(result[1], TENSOR_NAMES["weights"], (T_q, T_k))
    return predictions.detach().double(), weights.detach().double()


def nw(scores: Tensor) -> Tensor:
    """The weights of a score table ``(T_q, T_k)``: a softmax over the keys."""
    return torch.softmax(scores, dim=-1)


def _diagnose_kernel(got: Tensor, got_w: Tensor, queries: Tensor, keys: Tensor, values: Tensor,
                     width: float) -> None:  # fmt: skip
    """Raise the mistake (or the difference) that gives the reader's predictions and weights."""
    T_q, T_k = len(queries), len(keys)
    diff = queries[:, None] - keys  # (T_q, T_k)
    want, want_w = nadaraya_watson(queries, keys, values, width)
    sums = got_w.sum(-1)
    if close(got_w, torch.full((T_q, T_k), 1 / T_k)) or close(got, values.mean().expand(T_q)):
        raise Wrong.named(MISTAKES, "nw-unweighted-average")
    if not close(sums, torch.ones(T_q)):
        if close(got_w.sum(0), torch.ones(T_k)):
            raise Wrong.named(MISTAKES, "nw-softmax-over-queries")
        if (sums > 0).all() and close(got_w / sums[:, None], want_w, 1e-6):
            raise Wrong.named(MISTAKES, "nw-not-normalised",
                              sums=[round(s, 4) for s in sums.tolist()])  # fmt: skip
        raise Wrong.differs(MESSAGES, "nw-row-sums", sums=[round(s, 4) for s in sums.tolist()])
    looks_like = {  # the mistake id, and the weights it gives
        "nw-sign": nw(diff**2 / (2 * width**2)),
        "nw-no-half": nw(-(diff**2) / width**2),
        "nw-no-square": nw(-diff.abs() / (2 * width**2)),
        "nw-width-multiplies": nw(-(diff**2) * width**2 / 2),
        "nw-width-not-squared": nw(-(diff**2) / (2 * width)),
        "nw-two-squared": nw(-(diff**2) / (2 * width) ** 2),
    }
    for name, weights in looks_like.items():
        if close(got_w, weights, 1e-6):
            raise Wrong.named(MISTAKES, name)
    if close(got_w, want_w, 1e-6):
        raise Wrong.differs(MESSAGES, "nw-predictions-differ", width=width)
    _divisor_named(got_w, diff**2, width)
    raise Wrong.differs(MESSAGES, "nw-weights-differ", width=width, query=queries[0].item(),
                        want=[round(w, 4) for w in want_w[0].tolist()])  # fmt: skip


def _divisor_named(got_w: Tensor, squared: Tensor, width: float) -> None:
    """Weights that are a softmax of -(q - k)^2 / D for one constant D: say D."""
    logs = got_w.clamp_min(1e-300).log()
    dx, dy = squared - squared[:, :1], logs - logs[:, :1]  # the row's normaliser cancels
    if not (got_w > 0).all() or float((dx * dx).sum()) == 0:
        return
    divisor = -float((dx * dx).sum() / (dx * dy).sum())
    if divisor <= 0 or not close(got_w, nw(-squared / divisor), 1e-6):
        return
    if abs(divisor - math.sqrt(2 * math.pi) * width) < 1e-6 * divisor:
        raise Wrong.named(MISTAKES, "nw-density-constant", width=width)
    raise Wrong.differs(MESSAGES, "nw-other-divisor", divisor=round(divisor, 4), width=width,
                        want=round(2 * width**2, 4))  # fmt: skip


def _expect_rows_per_query(fn: Callable, queries: Tensor, keys: Tensor, values: Tensor) -> None:
    """Keys and values of one row per query, as leave_one_out gives them for training."""
    T_q, T_k = len(queries), len(keys)
    # one row of keys per query, as leave_one_out gives them for training
    rows_k = torch.stack([keys.roll(i)[1:] for i in range(T_q)])  # (T_q, T_k - 1)
    rows_v = torch.stack([values.roll(i)[1:] for i in range(T_q)])  # (T_q, T_k - 1)
    want, want_w = nadaraya_watson(queries, rows_k, rows_v, 0.5)
    try:
        result = fn(queries.clone(), rows_k.clone(), rows_v.clone(), 0.5)
        got, got_w = _predictions_and_weights(result, T_q, T_k - 1)
    except Exception as err:  # a wrong shape (Wrong) or an error of the reader's code
        what = str(err) if isinstance(err, Wrong) else describe(err, check_nadaraya_watson.spec)
        raise Wrong.differs(MESSAGES, "rows-per-query-raised", shape=tuple(rows_k.shape),
                            what=what) from None  # fmt: skip
    if not (close(got, want, 1e-6) and close(got_w, want_w, 1e-6)):
        raise Wrong.differs(MESSAGES, "nw-rows-per-query-differ", shape=tuple(rows_k.shape))


@check("Nadaraya-Watson regression", call="fn(queries, keys, values, width=1.0)")
def check_nadaraya_watson(fn: Callable[..., tuple[Tensor, Tensor]]) -> Verdict:
    """``fn(queries, keys, values, width=1.0) -> (predictions, weights)``: the Gaussian kernel
    ``a(q, k) = -(q - k)^2 / (2 width^2)``, its softmax over the keys as the weights
    ``(T_q, T_k)``, and the weighted sum of the values as the predictions ``(T_q,)``. Keys and
    values are ``(T_k,)`` (shared by all queries) or ``(T_q, T_k)`` (one row per query)."""
    g = torch.Generator().manual_seed(0)
    keys = torch.rand(9, generator=g, dtype=torch.float64) * 5  # (T_k,)
    values = torch.randn(9, generator=g, dtype=torch.float64)  # (T_k,)
    queries = torch.tensor([0.3, 1.7, 2.2, 4.6], dtype=torch.float64)  # (T_q,)
    T_q, T_k = len(queries), len(keys)
    # widths at which the look-alike mistakes differ from each other (at width 1 several
    # coincide: sigma, sigma^2 and 1 / sigma are all 1; at 0.5, 2 sigma and (2 sigma)^2)
    for width in (3.0, 0.5):
        want, want_w = nadaraya_watson(queries, keys, values, width)
        given = {"queries": queries.clone(), "keys": keys.clone(), "values": values.clone()}
        result = fn(*given.values(), width)
        expect_kept(given, {"queries": queries, "keys": keys, "values": values})
        got, got_w = _predictions_and_weights(result, T_q, T_k)
        if close(got, want, 1e-6) and close(got_w, want_w, 1e-6):
            continue
        _diagnose_kernel(got, got_w, queries, keys, values, width)
    _expect_rows_per_query(fn, queries, keys, values)
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)  # only the width asks for grad
    width = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    prediction, _ = fn(x, keys, values, width)
    if not (isinstance(prediction, Tensor) and prediction.requires_grad):
        raise Wrong.named(MISTAKES, "nw-width-detached")
    return ("the Gaussian kernel, its softmax over the keys and the weighted sum are right, "
            "for shared keys and for one row of keys per query.")  # fmt: skip
