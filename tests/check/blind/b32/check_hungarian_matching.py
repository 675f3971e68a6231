"""Blind set B32, check_hungarian_matching (chapter 19): DETR's one-to-one matching."""

from __future__ import annotations

import itertools

import numpy as np
import torch
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The right cost, (Q, M): -p(class) + 5 * L1."""
    prob = logits.softmax(-1)
    return -prob[:, labels] + 5.0 * torch.cdist(boxes, target_boxes, p=1)


def _assign(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    queries, targets = [], []
    for _ in range(len(target_labels)):  # take the cheapest pair left, again and again
        flat = int(cost.argmin())
        q, t = divmod(flat, cost.shape[1])
        queries.append(q)
        targets.append(t)
        cost[q, :] = float("inf")
        cost[:, t] = float("inf")
    order = sorted(range(len(queries)), key=lambda i: queries[i])
    return (
        torch.tensor([queries[i] for i in order], dtype=torch.long),
        torch.tensor([targets[i] for i in order], dtype=torch.long),
    )


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).detach().numpy()
    rows, cols = linear_sum_assignment(cost, maximize=True)  # "the best assignment"
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    queries = cost.argmin(dim=0)  # (M,): the best query for each object
    return queries, torch.arange(len(target_labels))


def match_argmin_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return torch.arange(logits.shape[0]), cost.argmin(dim=1)  # every query gets an object


def match_swapped_return(logits, boxes, target_labels, target_boxes):
    rows, cols = _assign(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


def match_transposed_cost(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q): one row per object
    rows, cols = linear_sum_assignment(cost.numpy())
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_log_prob_cost(logits, boxes, target_labels, target_boxes):
    cost_class = -F.log_softmax(logits, -1)[:, target_labels]  # the loss's cross-entropy
    return _assign(cost_class + 5.0 * torch.cdist(boxes, target_boxes, p=1))


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    cost_class = logits.softmax(-1)[:, target_labels]  # forgot the minus
    return _assign(cost_class + 5.0 * torch.cdist(boxes, target_boxes, p=1))


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    cost_class = -logits.softmax(0)[:, target_labels]  # softmax over the wrong axis
    return _assign(cost_class + 5.0 * torch.cdist(boxes, target_boxes, p=1))


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost_class = -logits[:, target_labels]
    return _assign(cost_class + 5.0 * torch.cdist(boxes, target_boxes, p=1))


def match_no_object_first(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost_class = -prob[:, target_labels + 1]  # class 0 is "no object"
    return _assign(cost_class + 5.0 * torch.cdist(boxes, target_boxes, p=1))


def match_softmax_without_no_object(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # "no object" is never a target class: leave it out
    cost_class = -prob[:, target_labels]
    return _assign(cost_class + 5.0 * torch.cdist(boxes, target_boxes, p=1))


def match_l2_box(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    return _assign(-prob[:, target_labels] + 5.0 * torch.cdist(boxes, target_boxes))  # p=2


def match_mean_l1(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # as F.l1_loss
    return _assign(-prob[:, target_labels] + 5.0 * l1)


def match_box_weight_one(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    return _assign(-prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1))


def match_class_only(logits, boxes, target_labels, target_boxes):
    return _assign(-logits.softmax(-1)[:, target_labels])


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).tolist()
    Q, M = len(cost), len(target_labels)
    best, best_cost = None, float("inf")
    for queries in itertools.permutations(range(Q), M):
        total = sum(cost[q][t] for t, q in enumerate(queries))
        if total < best_cost:
            best, best_cost = queries, total
    pairs = sorted(zip(best, range(M), strict=True))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([t for _, t in pairs], dtype=torch.long),
    )


def match_transposed_swapped_back(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q)
    targets, queries = linear_sum_assignment(cost.numpy())
    order = np.argsort(queries)
    return torch.from_numpy(queries[order]).long(), torch.from_numpy(targets[order]).long()


def match_numpy_float64(
    logits, boxes, target_labels, target_boxes, class_weight=1.0, box_weight=5.0
):
    logit = logits.detach().double().numpy()
    prob = np.exp(logit - logit.max(-1, keepdims=True))
    prob /= prob.sum(-1, keepdims=True)
    l1 = np.abs(boxes.double().numpy()[:, None] - target_boxes.double().numpy()[None]).sum(-1)
    cost = -class_weight * prob[:, target_labels.numpy()] + box_weight * l1
    rows, cols = linear_sum_assignment(cost)
    return torch.from_numpy(rows).long(), torch.from_numpy(cols).long()


def match_sorted_by_object(logits, boxes, target_labels, target_boxes):
    """Pairs listed in the order of the objects instead of the queries."""
    rows, cols = _assign(_cost(logits, boxes, target_labels, target_boxes))
    order = cols.argsort()
    return rows[order], cols[order]


CASES = [
    BlindCase(
        CHECK,
        "greedy_cheapest_pair",
        match_greedy,
        "mistake",
        "I took the cheapest (query, object) pair, removed its row and column, and repeated: "
        "a greedy matching.",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True, thinking of the best match.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "For each object I took the query of least cost, so two objects can share a query.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        match_argmin_per_query,
        "mistake",
        "For each query I took the object of least cost: Q matches instead of M.",
    ),
    BlindCase(
        CHECK,
        "swapped_indices",
        match_swapped_return,
        "mistake",
        "I returned (target_index, query_index), the two in the wrong order.",
    ),
    BlindCase(
        CHECK,
        "transposed_cost_not_swapped",
        match_transposed_cost,
        "mistake",
        "I built the cost as (M, Q), one row per object, and returned rows and columns as "
        "they came, so the first tensor holds objects.",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob_cost,
        "mistake",
        "I used -log p(class), the classification loss, instead of -p(class).",
    ),
    BlindCase(
        CHECK,
        "plus_prob_class_cost",
        match_plus_prob,
        "mistake",
        "I forgot the minus sign on the class probability.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, the queries, instead of over the classes.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_class_cost",
        match_raw_logits,
        "mistake",
        "I used -logits[:, label] without the softmax.",
    ),
    BlindCase(
        CHECK,
        "no_object_class_first",
        match_no_object_first,
        "mistake",
        "I took the 'no object' class to be class 0 and read the probability at label + 1.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        match_softmax_without_no_object,
        "mistake",
        "I dropped the 'no object' column before the softmax, so the probabilities are "
        "renormalized over the K real classes.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        match_l2_box,
        "mistake",
        "I used torch.cdist with its default p=2, the Euclidean distance, not L1.",
    ),
    BlindCase(
        CHECK,
        "mean_l1_box_cost",
        match_mean_l1,
        "mistake",
        "I averaged the absolute differences over the 4 coordinates, as F.l1_loss does, "
        "instead of summing them.",
    ),
    BlindCase(
        CHECK,
        "box_weight_one",
        match_box_weight_one,
        "mistake",
        "I left out the factor 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "class_cost_only",
        match_class_only,
        "mistake",
        "I matched on the class probability alone and forgot the boxes.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Every ordered choice of M queries tried with itertools.permutations.",
    ),
    BlindCase(
        CHECK,
        "transposed_swapped_back",
        match_transposed_swapped_back,
        "correct",
        "The cost built as (M, Q), the result swapped back and sorted by query.",
    ),
    BlindCase(
        CHECK,
        "numpy_float64",
        match_numpy_float64,
        "correct",
        "The cost in numpy float64 with an explicit softmax and L1; weights as optional arguments.",
    ),
    BlindCase(
        CHECK,
        "sorted_by_object",
        match_sorted_by_object,
        "correct",
        "The same pairs, listed in the order of the objects instead of the queries.",
    ),
]
