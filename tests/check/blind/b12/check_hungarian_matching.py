"""Blind set B12, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _solve(cost: Tensor, maximize: bool = False) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=maximize)
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def hm_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    qs, ts = [], []
    for t in range(cost.shape[1]):  # each object takes its cheapest free query, in order
        q = int(cost[:, t].argmin())
        qs.append(q)
        ts.append(t)
        cost[q, :] = float("inf")
    return torch.tensor(qs), torch.tensor(ts)


def hm_maximize(logits, boxes, target_labels, target_boxes):
    return _solve(_cost(logits, boxes, target_labels, target_boxes), maximize=True)


def hm_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    q = cost.argmin(0)  # the best query for every object (may repeat)
    return q, torch.arange(cost.shape[1])


def hm_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = _solve(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


def hm_transposed_cost(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q)
    rows, cols = _solve(cost)
    return rows, cols  # rows are objects here


def hm_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # sign forgotten
    return _solve(cost)


def hm_log_prob(logits, boxes, target_labels, target_boxes):
    logp = logits.log_softmax(-1)
    cost = -logp[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def hm_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # Euclidean distance
    return _solve(cost)


def hm_logits_not_probs(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def hm_no_box_weight(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)  # weight 5 forgotten
    return _solve(cost)


def hm_class_by_position(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    M = len(target_labels)
    cost = -prob[:, :M] + 5 * torch.cdist(boxes, target_boxes, p=1)  # column m for object m
    return _solve(cost)


# ---------------------------------------------------------------- correct variants


def hm_brute_force(logits, boxes, target_labels, target_boxes):
    """Every ordered choice of M distinct queries, the cheapest kept; sorted by query."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_q = float("inf"), None
    for qs in itertools.permutations(range(Q), M):
        total = float(cost[list(qs), list(range(M))].sum())
        if total < best:
            best, best_q = total, qs
    pairs = sorted(zip(best_q, range(M)))
    return (
        torch.tensor([p[0] for p in pairs], dtype=torch.long),
        torch.tensor([p[1] for p in pairs], dtype=torch.long),
    )


def hm_explicit_l1(logits, boxes, target_labels, target_boxes, box_weight: float = 5.0):
    """L1 by broadcasting, probabilities via exp(log_softmax); transposed problem solved and
    mapped back; an extra box_weight argument."""
    prob = logits.log_softmax(-1).exp()
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)
    cost = (box_weight * l1 - prob.index_select(1, target_labels)).T  # (M, Q)
    t_idx, q_idx = linear_sum_assignment(cost.numpy())
    order = q_idx.argsort()
    return torch.from_numpy(q_idx[order]).long(), torch.from_numpy(t_idx[order]).long()


def hm_numpy_float64(logits, boxes, target_labels, target_boxes):
    """The cost in float64 NumPy; the indices ordered by object instead of by query."""
    prob = logits.double().softmax(-1).numpy()
    b, tb = boxes.double().numpy(), target_boxes.double().numpy()
    l1 = abs(b[:, None, :] - tb[None, :, :]).sum(-1)
    cost = -prob[:, target_labels.numpy()] + 5.0 * l1
    rows, cols = linear_sum_assignment(cost)
    order = cols.argsort()
    return torch.as_tensor(rows[order]), torch.as_tensor(cols[order])


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        hm_greedy,
        "mistake",
        "Greedy: each object in turn takes its cheapest query still free.",
    ),
    BlindCase(
        CHECK,
        "maximize",
        hm_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True (the largest cost).",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        hm_argmin_per_object,
        "mistake",
        "For each object the query of least cost, so a query can be matched twice.",
    ),
    BlindCase(
        CHECK, "indices_swapped", hm_swapped, "mistake", "I returned (target_index, query_index)."
    ),
    BlindCase(
        CHECK,
        "transposed_cost_not_swapped_back",
        hm_transposed_cost,
        "mistake",
        "I built the cost as (M, Q) and returned rows, cols as they came: objects first.",
    ),
    BlindCase(
        CHECK,
        "plus_probability",
        hm_plus_prob,
        "mistake",
        "I added the class probability instead of subtracting it.",
    ),
    BlindCase(
        CHECK,
        "log_probability",
        hm_log_prob,
        "mistake",
        "I used -log p (the loss's cross-entropy) as the class cost, not -p.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        hm_l2_boxes,
        "mistake",
        "I used torch.cdist's default p=2, Euclidean, not L1.",
    ),
    BlindCase(
        CHECK,
        "raw_logits",
        hm_logits_not_probs,
        "mistake",
        "I used the logits directly, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "box_weight_forgotten",
        hm_no_box_weight,
        "mistake",
        "I forgot the factor 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "class_column_by_object_index",
        hm_class_by_position,
        "mistake",
        "I took prob[:, :M] (class column m for object m) instead of prob[:, target_labels].",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        hm_brute_force,
        "correct",
        "Tries every assignment with itertools.permutations.",
    ),
    BlindCase(
        CHECK,
        "broadcast_l1_transposed",
        hm_explicit_l1,
        "correct",
        "L1 by broadcasting, the (M, Q) problem solved and mapped back sorted by query; "
        "an extra box_weight argument.",
    ),
    BlindCase(
        CHECK,
        "numpy_sorted_by_object",
        hm_numpy_float64,
        "correct",
        "The cost in float64 NumPy; pairs returned sorted by object index.",
    ),
]
