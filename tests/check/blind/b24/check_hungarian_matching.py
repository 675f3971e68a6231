"""Blind set B24, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _assign(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


def _cost(logits, boxes, target_labels, target_boxes) -> Tensor:
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)  # (Q, M)
    used: set[int] = set()
    queries = []
    for j in range(cost.shape[1]):  # each object takes the cheapest query still free
        order = cost[:, j].argsort().tolist()
        q = next(i for i in order if i not in used)
        used.add(q)
        queries.append(q)
    return torch.tensor(queries), torch.arange(cost.shape[1])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_per_query_argmin(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    best_target = cost.argmin(dim=1)  # every query's cheapest object
    return torch.arange(cost.shape[0]), best_target


def match_indices_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = _assign(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


def match_transposed_cost(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q): one row per object
    query_idx, target_idx = _assign(cost)
    return query_idx, target_idx


def match_logits_not_probs(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_log_prob(logits, boxes, target_labels, target_boxes):
    log_prob = logits.log_softmax(-1)  # as in the cross-entropy
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_no_box_weight(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_l2_distance(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # default p=2
    return _assign(cost)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_background_first(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels + 1] + 5 * torch.cdist(boxes, target_boxes, p=1)  # 0 = none
    return _assign(cost)


def match_mean_abs(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # (Q, M)
    return _assign(-prob[:, target_labels] + 5 * l1)


def match_softmax_real_classes(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # the K real classes only
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_minus_on_box_too(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -(prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1))
    return _assign(cost)


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Every injective assignment tried; pairs returned in the order of the objects."""
    Q, M = logits.shape[0], len(target_labels)
    prob = torch.softmax(logits, dim=1)
    cost = (-prob[:, target_labels] + 5.0 * torch.cdist(boxes, target_boxes, p=1)).tolist()
    best, best_cost = None, float("inf")
    for queries in itertools.permutations(range(Q), M):
        total = sum(cost[q][j] for j, q in enumerate(queries))
        if total < best_cost:
            best, best_cost = queries, total
    return torch.tensor(best, dtype=torch.long), torch.arange(M)


def match_maximize_gain(logits, boxes, target_labels, target_boxes):
    """The negated cost maximised, in float64 NumPy with explicit broadcasting."""
    p = np.asarray(logits.double().softmax(-1))
    b = np.asarray(boxes.double())
    tb = np.asarray(target_boxes.double())
    l1 = np.abs(b[:, None, :] - tb[None, :, :]).sum(-1)
    gain = p[:, np.asarray(target_labels)] - 5.0 * l1
    rows, cols = linear_sum_assignment(gain, maximize=True)
    return torch.from_numpy(rows).long(), torch.from_numpy(cols).long()


def match_with_weights(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """Weights as keyword arguments; pairs sorted by object, gather for the class cost."""
    prob = logits.softmax(-1)
    cls = -prob.gather(1, target_labels[None].expand(len(prob), -1))  # (Q, M)
    box = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(-1)
    rows, cols = linear_sum_assignment((class_weight * cls + box_weight * box).numpy())
    order = np.argsort(cols)
    return torch.as_tensor(rows[order]), torch.as_tensor(cols[order])


CASES = [
    BlindCase(
        CHECK,
        "greedy_per_object",
        match_greedy,
        "mistake",
        "Each object in turn takes the cheapest query that is still free.",
    ),
    BlindCase(
        CHECK,
        "maximize_cost",
        match_maximize,
        "mistake",
        "linear_sum_assignment(cost, maximize=True): the largest total cost.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        match_per_query_argmin,
        "mistake",
        "Every query gets its cheapest object, Q pairs, objects used more than once.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_indices_swapped,
        "mistake",
        "return cols, rows.",
    ),
    BlindCase(
        CHECK,
        "cost_transposed",
        match_transposed_cost,
        "mistake",
        "I built the cost as (M, Q) and returned its rows as the query indices.",
    ),
    BlindCase(
        CHECK,
        "logits_not_probabilities",
        match_logits_not_probs,
        "mistake",
        "The class cost is -logit of the object's class, no softmax.",
    ),
    BlindCase(
        CHECK,
        "log_probability",
        match_log_prob,
        "mistake",
        "The class cost is -log p, as in the loss, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_no_box_weight,
        "mistake",
        "I forgot the factor 5 on the L1 distance.",
    ),
    BlindCase(
        CHECK,
        "euclidean_box_distance",
        match_l2_distance,
        "mistake",
        "torch.cdist(boxes, target_boxes) with its default p=2, not the L1 distance.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "softmax(0): over the queries instead of the classes.",
    ),
    BlindCase(
        CHECK,
        "no_object_class_first",
        match_background_first,
        "mistake",
        "I thought class 0 was 'no object' and read the probability at label + 1.",
    ),
    BlindCase(
        CHECK,
        "l1_mean_not_sum",
        match_mean_abs,
        "mistake",
        "The L1 distance as the mean of the four absolute differences, not their sum.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        match_softmax_real_classes,
        "mistake",
        "softmax over the K real classes only, the no-object logit left out.",
    ),
    BlindCase(
        CHECK,
        "minus_on_box_cost_too",
        match_minus_on_box_too,
        "mistake",
        "-(p + 5 * L1): the minus sign covers the box cost as well.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Every permutation tried; pairs in the order of the objects.",
    ),
    BlindCase(
        CHECK,
        "maximize_negated_cost_numpy",
        match_maximize_gain,
        "correct",
        "p - 5 * L1 in float64 NumPy, maximised.",
    ),
    BlindCase(
        CHECK,
        "weights_as_options_sorted_by_object",
        match_with_weights,
        "correct",
        "class_weight and box_weight keyword options; gather; pairs sorted by object index.",
    ),
]
