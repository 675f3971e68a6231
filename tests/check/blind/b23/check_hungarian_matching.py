"""Blind set B23, check_hungarian_matching (chapter 19): DETR's one-to-one matching as readers
write it."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    prob = logits.softmax(-1)  # (Q, K + 1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)


def _pairs(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used, rows, cols = set(), [], []
    for j in range(cost.shape[1]):  # each object takes the cheapest query still free
        for i in cost[:, j].argsort().tolist():
            if i not in used:
                used.add(i)
                rows.append(i)
                cols.append(j)
                break
    return _pairs(rows, cols)


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=True)  # largest cost
    return _pairs(rows, cols)


def match_argmin_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    cols = cost.argmin(dim=1)  # every query takes its best object: Q matches, repeats allowed
    return torch.arange(cost.shape[0]), cols


def match_argmin_per_target(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows = cost.argmin(dim=0)  # each object its best query; two objects may share one
    return rows, torch.arange(cost.shape[1])


def match_indices_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.T.detach().numpy())  # (M, Q): rows are objects
    return _pairs(rows, cols)  # returned as (query, target) without swapping back


def match_logits_not_probs(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # no softmax
    return _pairs(*linear_sum_assignment(cost.detach().numpy()))


def match_negative_log_prob(logits, boxes, target_labels, target_boxes):
    log_prob = logits.log_softmax(-1)
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # -log p
    return _pairs(*linear_sum_assignment(cost.detach().numpy()))


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2 by default
    return _pairs(*linear_sum_assignment(cost.detach().numpy()))


def match_box_weight_forgotten(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)  # weight 5 forgotten
    return _pairs(*linear_sum_assignment(cost.detach().numpy()))


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # dim 0: over the queries, not the classes
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _pairs(*linear_sum_assignment(cost.detach().numpy()))


def match_no_object_class_dropped(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # I left "no object" out of the softmax
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _pairs(*linear_sum_assignment(cost.detach().numpy()))


def match_class_sign_flipped(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # +p, not -p
    return _pairs(*linear_sum_assignment(cost.detach().numpy()))


def match_l1_mean_not_sum(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # mean of 4, not the sum
    cost = -prob[:, target_labels] + 5 * l1
    return _pairs(*linear_sum_assignment(cost.detach().numpy()))


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Every ordered choice of M queries, the cheapest kept; pairs sorted by query."""
    cost = _cost(logits, boxes, target_labels, target_boxes).tolist()
    Q, M = len(cost), len(target_labels)
    best, best_cost = None, float("inf")
    for queries in itertools.permutations(range(Q), M):
        total = sum(cost[q][j] for j, q in enumerate(queries))
        if total < best_cost:
            best, best_cost = queries, total
    pairs = sorted(zip(best, range(M), strict=True))
    return _pairs([q for q, _ in pairs], [j for _, j in pairs])


def match_numpy_loops(logits, boxes, target_labels, target_boxes):
    """The cost matrix built with numpy loops, then scipy."""
    logit = logits.detach().double().numpy()
    e = np.exp(logit - logit.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    b, tb = boxes.detach().double().numpy(), target_boxes.detach().double().numpy()
    labels = target_labels.tolist()
    cost = np.zeros((len(prob), len(labels)))
    for i in range(len(prob)):
        for j, k in enumerate(labels):
            cost[i, j] = -prob[i, k] + 5.0 * np.abs(b[i] - tb[j]).sum()
    rows, cols = linear_sum_assignment(cost)
    return torch.from_numpy(rows).long(), torch.from_numpy(cols).long()


def match_transposed_and_back(logits, boxes, target_labels, target_boxes):
    """scipy on the (M, Q) cost, then swapped back and sorted by query."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    obj, qry = linear_sum_assignment(cost.t().contiguous().detach().cpu().numpy())
    order = np.argsort(qry)
    return _pairs(qry[order], obj[order])


CASES = [
    BlindCase(
        CHECK,
        "greedy_per_object",
        match_greedy,
        "mistake",
        "each object in turn takes the cheapest query not taken yet (greedy, not optimal)",
    ),
    BlindCase(
        CHECK,
        "maximize_cost",
        match_maximize,
        "mistake",
        "linear_sum_assignment(..., maximize=True): I wanted the best match and maximized",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        match_argmin_per_query,
        "mistake",
        "cost.argmin(dim=1): one object for every query, Q matches",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_target,
        "mistake",
        "cost.argmin(dim=0): each object its best query, not one-to-one",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_indices_swapped,
        "mistake",
        "scipy on cost.T and the two index arrays returned without swapping back",
    ),
    BlindCase(
        CHECK,
        "class_cost_from_logits",
        match_logits_not_probs,
        "mistake",
        "class cost -logits[:, label]: I forgot the softmax",
    ),
    BlindCase(
        CHECK,
        "class_cost_minus_log_p",
        match_negative_log_prob,
        "mistake",
        "class cost -log p (the loss's term) instead of -p",
    ),
    BlindCase(
        CHECK,
        "box_cost_l2",
        match_l2_boxes,
        "mistake",
        "torch.cdist without p=1: a Euclidean box distance instead of L1",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_box_weight_forgotten,
        "mistake",
        "box cost added with weight 1 instead of 5",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "logits.softmax(0): the softmax over the queries instead of the classes",
    ),
    BlindCase(
        CHECK,
        "no_object_left_out_of_softmax",
        match_no_object_class_dropped,
        "mistake",
        "softmax over the K real classes only, the 'no object' logit dropped",
    ),
    BlindCase(
        CHECK,
        "class_cost_plus_p",
        match_class_sign_flipped,
        "mistake",
        "class cost +p instead of -p",
    ),
    BlindCase(
        CHECK,
        "l1_mean_of_coordinates",
        match_l1_mean_not_sum,
        "mistake",
        "the L1 distance as the mean of the 4 coordinate differences, not their sum",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "itertools.permutations over the queries, the cheapest total kept",
    ),
    BlindCase(
        CHECK,
        "numpy_cost_loops",
        match_numpy_loops,
        "correct",
        "the cost built in numpy with two loops, then linear_sum_assignment",
    ),
    BlindCase(
        CHECK,
        "transposed_and_swapped_back",
        match_transposed_and_back,
        "correct",
        "scipy on the (M, Q) cost, indices swapped back and sorted by query",
    ),
]
