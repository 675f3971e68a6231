"""Blind set B33, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The chapter's cost, -p(class) + 5 * L1, shared by the mistakes that are elsewhere."""
    prob = logits.softmax(-1)
    return (-prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)).detach()


def _as_long(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(np.asarray(rows), dtype=torch.long), torch.as_tensor(
        np.asarray(cols), dtype=torch.long
    )


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used: set[int] = set()
    rows, cols = [], []
    for j in range(cost.shape[1]):  # each object takes the cheapest free query
        order = cost[:, j].argsort().tolist()
        q = next(i for i in order if i not in used)
        used.add(q)
        rows.append(q)
        cols.append(j)
    return _as_long(rows, cols)


def match_greedy_global(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    rows, cols = [], []
    for _ in range(cost.shape[1]):  # repeatedly take the cheapest remaining pair
        flat = cost.argmin()
        q, j = divmod(int(flat), cost.shape[1])
        rows.append(q)
        cols.append(j)
        cost[q, :] = float("inf")
        cost[:, j] = float("inf")
    order = np.argsort(rows)
    return _as_long(np.array(rows)[order], np.array(cols)[order])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)
    return _as_long(rows, cols)


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    query_index = cost.argmin(dim=0)  # the best query for every object
    return query_index, torch.arange(cost.shape[1])


def match_one_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    target_index = cost.argmin(dim=1)  # every query predicts its closest object
    return torch.arange(cost.shape[0]), target_index


def match_swapped_outputs(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy())
    return _as_long(cols, rows)


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost_class = -logits[:, target_labels]  # higher logit = more likely
    cost = cost_class + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


def match_log_prob(logits, boxes, target_labels, target_boxes):
    cost_class = -logits.log_softmax(-1)[:, target_labels]  # the cross-entropy of the class
    cost = cost_class + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


def match_softmax_without_no_object(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # the objects' classes only, not "no object"
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)
    return _as_long(*linear_sum_assignment(cost.numpy()))


def match_l1_mean(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # like F.l1_loss
    cost = -prob[:, target_labels] + 5 * l1
    return _as_long(*linear_sum_assignment(cost.numpy()))


def match_weight_on_class(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -5 * prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


def match_centres_only(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes[:, :2], target_boxes[:, :2], p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).tolist()
    Q, M = len(cost), len(target_labels)
    best, best_total = None, float("inf")
    for queries in itertools.permutations(range(Q), M):
        total = sum(cost[q][j] for j, q in enumerate(queries))
        if total < best_total:
            best, best_total = queries, total
    pairs = sorted(zip(best, range(M)))
    return _as_long([q for q, _ in pairs], [j for _, j in pairs])


def match_transposed_numpy(logits, boxes, target_labels, target_boxes):
    lg = logits.detach().double().numpy()
    p = np.exp(lg - lg.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    b, tb = boxes.detach().double().numpy(), target_boxes.detach().double().numpy()
    l1 = np.abs(tb[:, None, :] - b[None, :, :]).sum(-1)  # (M, Q)
    cost = -p[:, target_labels.numpy()].T + 5.0 * l1  # objects as rows
    obj, query = linear_sum_assignment(cost)
    order = np.argsort(query)
    return torch.from_numpy(query[order]).long(), torch.from_numpy(obj[order]).long()


def match_by_target_order(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy())
    order = np.argsort(cols)  # object 0 first, then object 1, ...
    return _as_long(rows[order], cols[order])


CASES = [
    BlindCase(
        CHECK,
        "greedy_per_object",
        match_greedy,
        "mistake",
        "I went through the objects in order and gave each the cheapest query still free.",
    ),
    BlindCase(
        CHECK,
        "greedy_cheapest_pair",
        match_greedy_global,
        "mistake",
        "I repeatedly took the cheapest remaining (query, object) pair and crossed out its row "
        "and column.",
    ),
    BlindCase(
        CHECK,
        "maximize_true",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment(cost, maximize=True).",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "For each object I took the query with the lowest cost, cost.argmin(dim=0); two objects "
        "can get the same query.",
    ),
    BlindCase(
        CHECK,
        "one_match_per_query",
        match_one_per_query,
        "mistake",
        "I gave every query its cheapest object, so I return Q pairs.",
    ),
    BlindCase(
        CHECK,
        "swapped_indices",
        match_swapped_outputs,
        "mistake",
        "I returned (cols, rows) of linear_sum_assignment, i.e. (target_index, query_index).",
    ),
    BlindCase(
        CHECK,
        "raw_logits_class_cost",
        match_raw_logits,
        "mistake",
        "I used minus the logit of the class as the class cost, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob,
        "mistake",
        "I used -log p(class), the cross-entropy, as the class cost.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax with dim=0, over the queries.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        match_softmax_without_no_object,
        "mistake",
        "I dropped the no-object column before the softmax, since objects never have that class.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "I used torch.cdist with its default p=2 for the box distance.",
    ),
    BlindCase(
        CHECK,
        "l1_mean_over_coordinates",
        match_l1_mean,
        "mistake",
        "I averaged the absolute differences over the 4 coordinates instead of summing them.",
    ),
    BlindCase(
        CHECK,
        "weight_on_class",
        match_weight_on_class,
        "mistake",
        "I put the weight 5 on the class term and 1 on the box term.",
    ),
    BlindCase(
        CHECK,
        "box_centres_only",
        match_centres_only,
        "mistake",
        "I only compared the box centres (cx, cy) and left out width and height.",
    ),
    BlindCase(
        CHECK,
        "brute_force_permutations",
        match_brute_force,
        "correct",
        "I tried every assignment with itertools.permutations and kept the cheapest, sorted by "
        "query.",
    ),
    BlindCase(
        CHECK,
        "transposed_numpy_cost",
        match_transposed_numpy,
        "correct",
        "The cost in numpy with objects as rows, linear_sum_assignment on that, then the pairs "
        "sorted by query.",
    ),
    BlindCase(
        CHECK,
        "sorted_by_target",
        match_by_target_order,
        "correct",
        "linear_sum_assignment on the chapter's cost, the pairs returned in the order of the "
        "objects.",
    ),
]
