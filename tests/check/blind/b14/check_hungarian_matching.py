"""Blind set B14, check_hungarian_matching (chapter 19): DETR's one-to-one matching."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> Tensor:
    return -logits.softmax(-1)[:, labels] + 5 * torch.cdist(boxes, tboxes, p=1)


def _as_long(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    rows, cols = [], []
    for _ in range(len(target_labels)):  # take the cheapest pair left, again and again
        q, m = divmod(int(cost.argmin()), cost.shape[1])
        rows.append(q)
        cols.append(m)
        cost[q, :] = float("inf")
        cost[:, m] = float("inf")
    order = np.argsort(rows)
    return _as_long(np.array(rows)[order], np.array(cols)[order])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return _as_long(*linear_sum_assignment(cost.detach().numpy(), maximize=True))


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    q = cost.argmin(0)  # the best query of every object
    return q, torch.arange(len(target_labels))


def match_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(cols, rows)


def match_log_prob(logits, boxes, target_labels, target_boxes):
    cost = -logits.log_softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_no_box_weight(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_label_shifted(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)[:, 1:]  # class 0 is "no object", I thought
    cost = -prob[:, target_labels.clamp(max=prob.shape[1] - 1)]
    cost = cost + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    cost = logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Every assignment of M objects to distinct queries, the cheapest kept."""
    cost = _cost(logits, boxes, target_labels, target_boxes).tolist()
    M, Q = len(target_labels), len(cost)
    best, best_q = float("inf"), None
    for qs in itertools.permutations(range(Q), M):
        total = sum(cost[q][m] for m, q in enumerate(qs))
        if total < best:
            best, best_q = total, qs
    pairs = sorted(zip(best_q, range(M)))
    return _as_long([p[0] for p in pairs], [p[1] for p in pairs])


def match_broadcast_numpy(logits, boxes, target_labels, target_boxes):
    """The cost by broadcasting in float64 numpy; extra weights with defaults."""
    return _numpy_match(logits, boxes, target_labels, target_boxes)


def _numpy_match(logits, boxes, target_labels, target_boxes, w_class=1.0, w_box=5.0):
    lg = logits.detach().double().numpy()
    p = np.exp(lg - lg.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    b, tb = boxes.detach().double().numpy(), target_boxes.detach().double().numpy()
    l1 = np.abs(b[:, None, :] - tb[None, :, :]).sum(-1)
    cost = -w_class * p[:, target_labels.numpy()] + w_box * l1
    rows, cols = linear_sum_assignment(cost)
    return _as_long(rows, cols)


def match_transposed_back(logits, boxes, target_labels, target_boxes):
    """Solved on the (M, Q) cost, then swapped back and sorted by query."""
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q)
    objs, queries = linear_sum_assignment(cost.detach().numpy())
    order = np.argsort(queries)
    return _as_long(queries[order], objs[order])


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "I took the cheapest remaining pair again and again (greedy).",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "I gave each object its cheapest query, so two objects can share one.",
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
        "My class cost is -log p, as in the loss, not -p.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_class_cost",
        match_raw_logits,
        "mistake",
        "My class cost is minus the logit, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        match_l2_boxes,
        "mistake",
        "I used torch.cdist's default p=2 for the box distance.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_no_box_weight,
        "mistake",
        "I forgot the weight 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "class_index_shifted",
        match_label_shifted,
        "mistake",
        "I dropped the first column as 'no object', so each label reads the next class.",
    ),
    BlindCase(
        CHECK,
        "plus_probability",
        match_plus_prob,
        "mistake",
        "I added the probability instead of subtracting it.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Tries every assignment with itertools.permutations, sorted by query.",
    ),
    BlindCase(
        CHECK,
        "numpy_float64",
        match_broadcast_numpy,
        "correct",
        "The cost built by broadcasting in float64 numpy.",
    ),
    BlindCase(
        CHECK,
        "transposed_then_back",
        match_transposed_back,
        "correct",
        "Solves the (M, Q) cost and swaps back, sorted by query.",
    ),
]
