"""Blind set B11, check_hungarian_matching (chapter 19): DETR's Hungarian matching as readers
write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The right (Q, M) cost, shared by the mistakes that are elsewhere."""
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _as_long(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used, rows, cols = set(), [], []
    for j in range(cost.shape[1]):  # each object takes the cheapest free query
        order = cost[:, j].argsort()
        i = next(int(q) for q in order if int(q) not in used)
        used.add(i)
        rows.append(i)
        cols.append(j)
    pairs = sorted(zip(rows, cols))
    return _as_long([r for r, _ in pairs], [c for _, c in pairs])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=True)
    return _as_long(rows, cols)


def match_per_query_argmin(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    cols = cost.argmin(dim=1)  # the best object for every query
    return torch.arange(cost.shape[0]), cols


def match_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(cols, rows)  # (object, query)


def match_log_prob(logits, boxes, target_labels, target_boxes):
    logp = logits.log_softmax(-1)  # the loss uses log-probabilities, so the cost does too
    cost = -logp[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(rows, cols)


def match_l2_box(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2 by default
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(rows, cols)


def match_no_box_weight(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + (boxes[:, None, :] - target_boxes[None]).abs().sum(-1)
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(rows, cols)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(rows, cols)


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # a cost: +
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(rows, cols)


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(rows, cols)


def match_transposed_unswapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q): one row per object
    obj, query = linear_sum_assignment(cost.detach().numpy())
    return _as_long(query, obj)[::-1]  # I reversed the pair "to put queries first"


# ---------------------------------------------------------------- correct variants


def match_scipy_broadcast(logits, boxes, target_labels, target_boxes):
    """The cost by broadcasting (no cdist), scipy on a float64 NumPy array."""
    p = torch.softmax(logits, dim=-1)
    l1 = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(dim=-1)  # (Q, M)
    cost = (5.0 * l1 - p.index_select(1, target_labels)).detach().double().cpu().numpy()
    q, t = linear_sum_assignment(cost)
    return torch.from_numpy(q).long(), torch.from_numpy(t).long()


def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Every assignment of M of the Q queries tried; pairs returned sorted by query."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_total = None, float("inf")
    for queries in itertools.permutations(range(Q), M):
        total = sum(float(cost[q, m]) for m, q in enumerate(queries))
        if total < best_total:
            best, best_total = queries, total
    pairs = sorted((q, m) for m, q in enumerate(best))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([m for _, m in pairs], dtype=torch.long),
    )


def match_transposed_sorted(logits, boxes, target_labels, target_boxes, class_weight: float = 1.0):
    """scipy on the (M, Q) cost, the pairs swapped back and sorted by query; an extra
    class_weight argument with a default."""
    prob = logits.softmax(-1)
    cost = class_weight * -prob[:, target_labels].T + 5 * torch.cdist(target_boxes, boxes, p=1)
    obj, query = linear_sum_assignment(cost.detach().numpy())
    order = query.argsort()
    return _as_long(query[order], obj[order])


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "Each object in turn takes the cheapest query still free (greedy, not optimal).",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "linear_sum_assignment(..., maximize=True): the largest total cost.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        match_per_query_argmin,
        "mistake",
        "Each query takes its cheapest object (argmin over dim 1): Q matches, not one-to-one.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped,
        "mistake",
        "I returned (target_index, query_index).",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob,
        "mistake",
        "My class cost is -log p, as in the loss, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        match_l2_box,
        "mistake",
        "torch.cdist without p=1: the box cost is the L2 distance.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_no_box_weight,
        "mistake",
        "I forgot the weight 5 on the L1 box cost.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "softmax(0) over the queries instead of over the classes.",
    ),
    BlindCase(
        CHECK,
        "class_cost_sign",
        match_plus_prob,
        "mistake",
        "I added +p for the class instead of -p, so a likely class costs more.",
    ),
    BlindCase(
        CHECK,
        "raw_logits",
        match_raw_logits,
        "mistake",
        "I used -logit of the class instead of -softmax probability.",
    ),
    BlindCase(
        CHECK,
        "transposed_then_reversed",
        match_transposed_unswapped,
        "mistake",
        "I solved the (M, Q) cost, whose rows are objects, and then reversed the returned pair "
        "again, so objects come first.",
    ),
    BlindCase(
        CHECK,
        "scipy_broadcast_cost",
        match_scipy_broadcast,
        "correct",
        "The L1 distance by broadcasting, index_select for the class column, scipy on float64.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Every assignment of M queries tried with itertools.permutations.",
    ),
    BlindCase(
        CHECK,
        "transposed_sorted",
        match_transposed_sorted,
        "correct",
        "scipy on the (M, Q) cost, pairs swapped back and sorted by query; an optional "
        "class_weight argument.",
    ),
]
