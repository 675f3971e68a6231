"""Blind cases for check_hungarian_matching (chapter 19), written from the chapter's text only."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)


def _as_long(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    free = torch.ones(cost.shape[0], dtype=torch.bool)
    rows, cols = [], []
    for j in range(cost.shape[1]):  # each object in turn takes the cheapest free query
        q = int(cost[:, j].masked_fill(~free, float("inf")).argmin())
        free[q] = False
        rows.append(q)
        cols.append(j)
    order = sorted(range(len(rows)), key=lambda i: rows[i])
    return _as_long([rows[i] for i in order], [cols[i] for i in order])


@torch.no_grad()
def maximizes_cost(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.cpu().numpy(), maximize=True)
    return _as_long(rows, cols)


@torch.no_grad()
def best_query_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows = cost.argmin(dim=0)  # (M,): each object's cheapest query, maybe the same one twice
    return rows, torch.arange(cost.shape[1])


@torch.no_grad()
def indices_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return _as_long(cols, rows)  # (target_index, query_index)


@torch.no_grad()
def log_probability_class_cost(logits, boxes, target_labels, target_boxes):
    log_prob = logits.log_softmax(-1)  # the cross-entropy of the loss
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return _as_long(rows, cols)


@torch.no_grad()
def logits_as_class_cost(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return _as_long(rows, cols)


@torch.no_grad()
def euclidean_box_cost(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2 by default
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return _as_long(rows, cols)


@torch.no_grad()
def box_weight_forgotten(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return _as_long(rows, cols)


@torch.no_grad()
def softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # over the Q queries instead of the classes
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return _as_long(rows, cols)


@torch.no_grad()
def returns_list_of_pairs(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return [(int(q), int(t)) for q, t in zip(rows, cols)]  # one (query, object) pair per match


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def scipy_on_broadcast_cost(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    p = torch.softmax(logits, dim=-1).gather(
        1, target_labels[None, :].expand(logits.shape[0], -1)
    )  # (Q, M)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)  # (Q, M)
    cost = -class_weight * p + box_weight * l1
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return _as_long(rows, cols)


@torch.no_grad()
def brute_force(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).tolist()
    Q, M = len(cost), len(target_labels)
    best = min(
        itertools.permutations(range(Q), M),
        key=lambda qs: sum(cost[q][j] for j, q in enumerate(qs)),
    )
    pairs = sorted(zip(best, range(M)))  # by query, as linear_sum_assignment returns them
    return _as_long([q for q, _ in pairs], [j for _, j in pairs])


@torch.no_grad()
def assignment_of_objects(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    objects, queries = linear_sum_assignment(
        cost.T.cpu().numpy()
    )  # (M, Q): every object gets a query
    return _as_long(queries, objects)  # pairs in the order of the objects


CASES = [
    BlindCase(
        CHECK,
        "greedy_per_object",
        greedy_per_object,
        "mistake",
        "I matched greedily: each object in turn takes the cheapest query still free, instead "
        "of the assignment of least total cost",
    ),
    BlindCase(
        CHECK,
        "maximizes_cost",
        maximizes_cost,
        "mistake",
        "I called linear_sum_assignment with maximize=True, so it finds the largest total cost",
    ),
    BlindCase(
        CHECK,
        "best_query_per_object",
        best_query_per_object,
        "mistake",
        "I took cost.argmin(dim=0): each object gets its cheapest query independently, so one "
        "query can be matched to several objects",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        indices_swapped,
        "mistake",
        "I returned (target_index, query_index) instead of (query_index, target_index)",
    ),
    BlindCase(
        CHECK,
        "log_probability_class_cost",
        log_probability_class_cost,
        "mistake",
        "my class cost is -log p (the cross-entropy of the loss) instead of -p",
    ),
    BlindCase(
        CHECK,
        "logits_as_class_cost",
        logits_as_class_cost,
        "mistake",
        "I forgot the softmax: the class cost is minus the logit, not minus the probability",
    ),
    BlindCase(
        CHECK,
        "euclidean_box_cost",
        euclidean_box_cost,
        "mistake",
        "I used torch.cdist(boxes, target_boxes) with its default p=2: a Euclidean box "
        "distance instead of L1",
    ),
    BlindCase(
        CHECK,
        "box_weight_forgotten",
        box_weight_forgotten,
        "mistake",
        "I forgot the factor 5 on the L1 box cost",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        softmax_over_queries,
        "mistake",
        "I took the softmax of the logits over dim 0 (the queries) instead of over the classes",
    ),
    BlindCase(
        CHECK,
        "returns_list_of_pairs",
        returns_list_of_pairs,
        "mistake",
        "I returned a list of (query, object) pairs instead of two index tensors",
    ),
    BlindCase(
        CHECK,
        "scipy_on_broadcast_cost",
        scipy_on_broadcast_cost,
        "correct",
        "class probabilities with gather and the L1 distance by broadcasting instead of cdist; "
        "extra class_weight and box_weight arguments with the book's defaults",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        brute_force,
        "correct",
        "every injective assignment tried with itertools.permutations, pairs sorted by query",
    ),
    BlindCase(
        CHECK,
        "assignment_of_objects",
        assignment_of_objects,
        "correct",
        "linear_sum_assignment on the transposed (M, Q) cost, the same pairs returned in the "
        "order of the objects rather than of the queries",
    ),
]
