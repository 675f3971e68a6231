"""Blind cases for check_hungarian_matching (chapter 19), written from the chapter's text only."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, labels: Tensor, target_boxes: Tensor) -> Tensor:
    prob = logits.softmax(-1)
    return -prob[:, labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)


def _solve(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


def greedy_by_target(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    queries = []
    for j in range(cost.shape[1]):  # each object takes the cheapest query still free
        i = int(cost[:, j].argmin())
        queries.append(i)
        cost[i, :] = float("inf")
    order = sorted(range(len(queries)), key=lambda j: queries[j])
    return (
        torch.tensor([queries[j] for j in order], dtype=torch.long),
        torch.tensor(order, dtype=torch.long),
    )


def largest_cost(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy(), maximize=True)
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


def argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return cost.argmin(dim=0), torch.arange(cost.shape[1])  # a query may get two objects


def indices_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = _solve(_cost(logits, boxes, target_labels, target_boxes).T)  # (M, Q)
    return rows, cols  # rows are objects here, but I return them as the queries


def log_prob_class_cost(logits, boxes, target_labels, target_boxes):
    cost = -logits.log_softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def l2_box_cost(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)
    return _solve(cost)


def box_weight_forgotten(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def softmax_over_queries(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(0)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def brute_force(logits, boxes, target_labels, target_boxes):
    """Correct: every ordered choice of M distinct queries, the cheapest kept."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_queries = float("inf"), None
    for queries in itertools.permutations(range(Q), M):
        total = float(sum(cost[q, j] for j, q in enumerate(queries)))
        if total < best:
            best, best_queries = total, queries
    pairs = sorted((q, j) for j, q in enumerate(best_queries))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([j for _, j in pairs], dtype=torch.long),
    )


def transposed_then_swapped(
    logits, boxes, target_labels, target_boxes, class_weight=1.0, box_weight=5.0
):
    """Correct: the (M, Q) cost written with broadcasting, solved, swapped back and sorted."""
    prob = logits.softmax(dim=-1)  # (Q, K+1)
    class_cost = -prob.T[target_labels]  # (M, Q)
    l1 = (target_boxes[:, None, :] - boxes[None, :, :]).abs().sum(-1)  # (M, Q)
    cost = class_weight * class_cost + box_weight * l1
    objects, queries = linear_sum_assignment(cost.detach().cpu().numpy())
    order = queries.argsort()
    return (
        torch.as_tensor(queries[order], dtype=torch.long),
        torch.as_tensor(objects[order], dtype=torch.long),
    )


CASES = [
    BlindCase(
        CHECK,
        "greedy_by_target",
        greedy_by_target,
        "mistake",
        "each object in turn takes the cheapest query that is still free (greedy)",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        largest_cost,
        "mistake",
        "I called linear_sum_assignment with maximize=True",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        argmin_per_object,
        "mistake",
        "each object takes its cheapest query, so one query can take two objects",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        indices_swapped,
        "mistake",
        "I solved on the (M, Q) cost and returned its rows (objects) as the query indices",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        log_prob_class_cost,
        "mistake",
        "I used -log p (the training loss) as the class cost instead of -p",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        l2_box_cost,
        "mistake",
        "I used torch.cdist's default p=2, a Euclidean box distance, not L1",
    ),
    BlindCase(
        CHECK,
        "box_weight_forgotten",
        box_weight_forgotten,
        "mistake",
        "I forgot the factor 5 on the box cost",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0, the queries, instead of the classes",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        brute_force,
        "correct",
        "every ordered choice of M queries tried with itertools.permutations",
    ),
    BlindCase(
        CHECK,
        "transposed_then_swapped",
        transposed_then_swapped,
        "correct",
        "the cost built (M, Q) by broadcasting, solved, swapped back and sorted by query; "
        "optional weights",
    ),
]
