"""Blind set B8, check_hungarian_matching (chapter 19): DETR's bipartite matching as readers
write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _assign(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)
    used, q_idx = set(), []
    for m in range(cost.shape[1]):  # each object takes the cheapest query still free
        for q in cost[:, m].argsort().tolist():
            if q not in used:
                used.add(q)
                q_idx.append(q)
                break
    return torch.tensor(q_idx), torch.arange(cost.shape[1])


def match_maximize(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_argmin_per_query(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return torch.arange(cost.shape[0]), cost.argmin(dim=1)  # every query its best object


def match_swapped(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = _assign(cost)
    return cols, rows  # (target, query) instead of (query, target)


def match_log_prob(logits, boxes, target_labels, target_boxes):
    log_prob = logits.log_softmax(-1)  # the class cost as in the loss: -log p
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # sign lost
    return _assign(cost)


def match_box_weight_one(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)  # forgot the 5
    return _assign(cost)


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # default p=2
    return _assign(cost)


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # no softmax
    return _assign(cost)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # over the queries instead of the classes
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_softmax_without_no_object(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # "no object" left out of the softmax
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_label_offset(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    # I thought class 0 was "no object", so label k is column k + 1
    cost = -prob[:, target_labels + 1] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    Q, M = len(boxes), len(target_labels)
    best, best_cost = None, float("inf")
    for queries in itertools.permutations(range(Q), M):  # query for object 0, 1, ...
        total = 0.0
        for m, q in enumerate(queries):
            l1 = (boxes[q] - target_boxes[m]).abs().sum()
            total += float(-prob[q, target_labels[m]] + 5 * l1)
        if total < best_cost:
            best, best_cost = queries, total
    return torch.tensor(best, dtype=torch.long), torch.arange(M)


def match_transposed_cost(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = torch.cdist(target_boxes, boxes, p=1)  # (M, Q)
    cost = -prob.T[target_labels] + 5 * l1  # (M, Q): objects as rows
    obj, query = linear_sum_assignment(cost.numpy())
    order = query.argsort()  # list the pairs by query, as the book does
    return torch.as_tensor(query[order]), torch.as_tensor(obj[order])


def match_weights_as_arguments(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    one_hot = torch.nn.functional.one_hot(target_labels, logits.shape[-1]).to(logits.dtype)
    p_class = logits.softmax(-1) @ one_hot.T  # (Q, M)
    cost = -class_weight * p_class + box_weight * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def _case(name: str, code, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "greedy_per_object",
        match_greedy,
        "mistake",
        "Each object in turn takes the cheapest query not yet used; greedy, not the least total "
        "cost.",
    ),
    _case(
        "maximize_cost",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment(cost, maximize=True), thinking it picks the best match.",
    ),
    _case(
        "argmin_per_query",
        match_argmin_per_query,
        "mistake",
        "For every query I return its cheapest object (argmin over the columns): Q pairs, not "
        "one-to-one.",
    ),
    _case(
        "indices_swapped",
        match_swapped,
        "mistake",
        "I return (col_ind, row_ind) of linear_sum_assignment, i.e. (target, query) instead of "
        "(query, target).",
    ),
    _case(
        "class_cost_minus_log_prob",
        match_log_prob,
        "mistake",
        "My class cost is -log p, as in the cross-entropy loss, instead of -p.",
    ),
    _case(
        "class_cost_plus_prob",
        match_plus_prob,
        "mistake",
        "I wrote +p for the class cost, so a query is preferred when it does *not* predict the "
        "object's class.",
    ),
    _case(
        "box_weight_missing",
        match_box_weight_one,
        "mistake",
        "The L1 box cost is added with weight 1 instead of 5.",
    ),
    _case(
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "torch.cdist without p=1 gives the Euclidean distance between boxes, not L1.",
    ),
    _case(
        "raw_logits_class_cost",
        match_raw_logits,
        "mistake",
        "I used -logits of the object's class in the cost, without the softmax.",
    ),
    _case(
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "logits.softmax(0): the probabilities are normalised over the queries, not over the "
        "classes.",
    ),
    _case(
        "softmax_without_no_object",
        match_softmax_without_no_object,
        "mistake",
        "I dropped the 'no object' column before the softmax, so the class probabilities are "
        "renormalised over the K real classes.",
    ),
    _case(
        "label_column_off_by_one",
        match_label_offset,
        "mistake",
        "I indexed the probabilities at target_labels + 1, thinking column 0 is 'no object'.",
    ),
    _case(
        "brute_force_permutations",
        match_brute_force,
        "correct",
        "Tries every ordered choice of M queries (Q is small); returns them in object order with "
        "arange(M) as the target index.",
    ),
    _case(
        "objects_as_rows",
        match_transposed_cost,
        "correct",
        "Builds the cost transposed, (M, Q) with objects as rows, assigns, and lists the pairs "
        "by query.",
    ),
    _case(
        "one_hot_matmul_weights",
        match_weights_as_arguments,
        "correct",
        "Class probabilities picked with a one-hot matrix product; the two weights are "
        "arguments defaulting to 1 and 5.",
    ),
]
