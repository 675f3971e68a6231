"""Blind set B20, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    *,
    softmax_dim: int = -1,
    class_sign: float = -1.0,
    use_softmax: bool = True,
    box_p: float = 1.0,
    box_weight: float = 5.0,
    box_mean: bool = False,
) -> Tensor:
    prob = logits.softmax(softmax_dim) if use_softmax else logits
    cost_class = class_sign * prob[:, target_labels]  # (Q, M)
    diff = (boxes[:, None, :] - target_boxes[None, :, :]).abs()  # (Q, M, 4)
    if box_mean:
        cost_box = diff.mean(-1)
    elif box_p == 1.0:
        cost_box = diff.sum(-1)
    else:
        cost_box = torch.cdist(boxes, target_boxes, p=box_p)
    return cost_class + box_weight * cost_box


def _lsa(cost: Tensor, maximize: bool = False) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy(), maximize=maximize)
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used: set[int] = set()
    queries = []
    for j in range(cost.shape[1]):  # each object takes the cheapest query still free
        order = cost[:, j].argsort().tolist()
        q = next(i for i in order if i not in used)
        used.add(q)
        queries.append(q)
    return torch.tensor(queries), torch.arange(cost.shape[1])


def match_maximize(logits, boxes, target_labels, target_boxes):
    return _lsa(_cost(logits, boxes, target_labels, target_boxes), maximize=True)


def match_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return torch.arange(cost.shape[0]), cost.argmin(dim=1)  # every query gets its best object


def match_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = _lsa(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows  # (target, query)


def match_class_sign(logits, boxes, target_labels, target_boxes):
    # + p instead of - p
    return _lsa(_cost(logits, boxes, target_labels, target_boxes, class_sign=1.0))


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    return _lsa(_cost(logits, boxes, target_labels, target_boxes, box_p=2.0))  # cdist p=2


def match_box_weight_missing(logits, boxes, target_labels, target_boxes):
    return _lsa(_cost(logits, boxes, target_labels, target_boxes, box_weight=1.0))


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    return _lsa(_cost(logits, boxes, target_labels, target_boxes, softmax_dim=0))


def match_no_softmax(logits, boxes, target_labels, target_boxes):
    # -logit of the class instead of -probability
    return _lsa(_cost(logits, boxes, target_labels, target_boxes, use_softmax=False))


def match_box_mean(logits, boxes, target_labels, target_boxes):
    # L1 as the mean of the 4 coordinate differences
    return _lsa(_cost(logits, boxes, target_labels, target_boxes, box_mean=True))


def match_brute_first_m_queries(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    M = cost.shape[1]
    best, best_perm = float("inf"), None
    for perm in itertools.permutations(range(M)):  # permuted the first M queries only
        total = sum(float(cost[q, j]) for j, q in enumerate(perm))
        if total < best:
            best, best_perm = total, perm
    return torch.tensor(best_perm, dtype=torch.long), torch.arange(M)


# ---------------------------------------------------------------- correct


def match_scipy_cdist(logits, boxes, target_labels, target_boxes):
    prob = torch.softmax(logits.double(), dim=-1)
    cost = -prob[:, target_labels] + 5.0 * torch.cdist(boxes.double(), target_boxes.double(), p=1)
    q, t = linear_sum_assignment(cost.numpy())
    return torch.from_numpy(q).long(), torch.from_numpy(t).long()


def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Every assignment of the M objects to M distinct queries."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_perm = float("inf"), ()
    for perm in itertools.permutations(range(Q), M):
        total = cost[list(perm), list(range(M))].sum().item()
        if total < best:
            best, best_perm = total, perm
    return torch.tensor(best_perm, dtype=torch.long), torch.arange(M, dtype=torch.long)


def match_transposed_problem(logits, boxes, target_labels, target_boxes):
    """Solved on the (M, Q) cost and returned sorted by query."""
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q)
    t, q = linear_sum_assignment(cost.numpy())
    order = q.argsort()
    return torch.as_tensor(q[order]).long(), torch.as_tensor(t[order]).long()


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "each object in turn takes the cheapest free query",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "linear_sum_assignment(cost, maximize=True)",
    ),
    BlindCase(
        CHECK,
        "per_query",
        match_per_query,
        "mistake",
        "argmin over the objects for every query",
    ),
    BlindCase(CHECK, "swapped", match_swapped, "mistake", "returned (target, query)"),
    BlindCase(CHECK, "class_sign", match_class_sign, "mistake", "+ p of the class instead of - p"),
    BlindCase(CHECK, "l2_boxes", match_l2_boxes, "mistake", "cdist with p=2 for the boxes"),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_box_weight_missing,
        "mistake",
        "left out the factor 5 on the box cost",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "softmax(dim=0), over the queries",
    ),
    BlindCase(
        CHECK,
        "no_softmax",
        match_no_softmax,
        "mistake",
        "used the logits directly, no softmax",
    ),
    BlindCase(
        CHECK,
        "box_mean",
        match_box_mean,
        "mistake",
        "L1 as the mean over the 4 coordinates instead of the sum",
    ),
    BlindCase(
        CHECK,
        "brute_first_m_queries",
        match_brute_first_m_queries,
        "mistake",
        "brute force over permutations(range(M)): only the first M queries",
    ),
    BlindCase(
        CHECK,
        "scipy_cdist",
        match_scipy_cdist,
        "correct",
        "cost in float64 with torch.cdist, scipy",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "every assignment, returned in object order",
    ),
    BlindCase(
        CHECK,
        "transposed_problem",
        match_transposed_problem,
        "correct",
        "scipy on the (M, Q) cost, pairs sorted by query",
    ),
]
