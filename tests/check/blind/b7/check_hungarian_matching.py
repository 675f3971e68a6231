"""Blind set B7, check_hungarian_matching (chapter 19): DETR's bipartite matching."""

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


def _as_long(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used, pairs = set(), []
    for j in range(cost.shape[1]):  # each object takes the cheapest query still free
        for i in cost[:, j].argsort().tolist():
            if i not in used:
                used.add(i)
                pairs.append((i, j))
                break
    pairs.sort()
    return _as_long([i for i, _ in pairs], [j for _, j in pairs])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=True)
    return _as_long(rows, cols)


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    query = cost.argmin(dim=0)  # the best query of every object (two objects may share one)
    return query, torch.arange(cost.shape[1])


def match_indices_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(cols, rows)


def match_class_cost_positive(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_box_weight_missing(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_class_cost_on_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_l2_box_cost(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2 by default
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_log_prob_class_cost(logits, boxes, target_labels, target_boxes):
    log_prob = logits.log_softmax(-1)  # as in the classification loss
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_l1_mean_over_coords(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # (Q, M)
    cost = -prob[:, target_labels] + 5 * l1
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_no_object_column(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    # "classes are 1 .. K, 0 is no-object": shift the labels by one
    cost = -prob[:, target_labels + 1] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


# ---------------------------------------------------------------- correct variants


def match_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every injective assignment of objects to queries tried; cost with explicit loops."""
    Q, M = logits.shape[0], len(target_labels)
    prob = logits.double().softmax(-1)
    cost = [
        [
            -float(prob[q, target_labels[m]])
            + 5.0 * float((boxes[q].double() - target_boxes[m].double()).abs().sum())
            for m in range(M)
        ]
        for q in range(Q)
    ]
    best, best_queries = float("inf"), None
    for queries in itertools.permutations(range(Q), M):
        total = sum(cost[q][m] for m, q in enumerate(queries))
        if total < best:
            best, best_queries = total, queries
    pairs = sorted((q, m) for m, q in enumerate(best_queries))
    return _as_long([q for q, _ in pairs], [m for _, m in pairs])


def match_transposed_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The (M, Q) cost given to linear_sum_assignment, pairs turned back and sorted by query."""
    prob = logits.softmax(dim=-1)
    l1 = (target_boxes[:, None, :] - boxes[None, :, :]).abs().sum(-1)  # (M, Q)
    cost = -prob.T[target_labels] + 5 * l1  # (M, Q)
    objects, queries = linear_sum_assignment(cost.detach().cpu().numpy())
    order = queries.argsort()
    return _as_long(queries[order], objects[order])


def match_gather_with_weights(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """Class probabilities gathered per pair; optional weights with the book's defaults."""
    Q, M = logits.shape[0], len(target_labels)
    prob = torch.softmax(logits, dim=1)
    p = prob.gather(1, target_labels.long()[None, :].expand(Q, M))  # (Q, M)
    box = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(dim=2)
    cost = (box_weight * box - class_weight * p).detach()
    rows, cols = linear_sum_assignment(cost.numpy())
    return torch.from_numpy(rows).long(), torch.from_numpy(cols).long()


CASES = [
    BlindCase(
        CHECK,
        "greedy_matching",
        match_greedy,
        "mistake",
        "Each object in turn takes the cheapest query not yet taken, instead of the assignment "
        "of least total cost.",
    ),
    BlindCase(
        CHECK,
        "largest_total_cost",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment(cost, maximize=True), thinking of a score.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "Each object gets its cheapest query with argmin over the queries, so two objects can "
        "get the same query.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_indices_swapped,
        "mistake",
        "I return (target_index, query_index) instead of (query_index, target_index).",
    ),
    BlindCase(
        CHECK,
        "class_cost_positive",
        match_class_cost_positive,
        "mistake",
        "The class term is +p instead of -p, so a likely class makes a pair more expensive.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_box_weight_missing,
        "mistake",
        "I forgot the factor 5 on the L1 box cost.",
    ),
    BlindCase(
        CHECK,
        "class_cost_on_raw_logits",
        match_class_cost_on_logits,
        "mistake",
        "The class term uses the raw logits of the object's class, not softmax probabilities.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        match_l2_box_cost,
        "mistake",
        "torch.cdist without p=1, i.e. the Euclidean distance between boxes instead of L1.",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob_class_cost,
        "mistake",
        "I used -log p (as in the classification loss) for the class term instead of -p.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "softmax(0): the probabilities are normalized over the queries instead of the classes.",
    ),
    BlindCase(
        CHECK,
        "l1_mean_over_coordinates",
        match_l1_mean_over_coords,
        "mistake",
        "I took .mean(-1) of the absolute coordinate differences instead of .sum(-1), so the "
        "box term is 4 times too small.",
    ),
    BlindCase(
        CHECK,
        "labels_shifted_for_no_object",
        match_no_object_column,
        "mistake",
        "I thought class 0 was 'no object' and looked up the probability of label + 1; the "
        "book's no-object class is the last one.",
    ),
    BlindCase(
        CHECK,
        "brute_force_permutations",
        match_brute_force,
        "correct",
        "Every injective assignment tried with itertools.permutations, the cost computed with "
        "Python loops in float64; pairs sorted by query.",
    ),
    BlindCase(
        CHECK,
        "transposed_cost_matrix",
        match_transposed_cost,
        "correct",
        "linear_sum_assignment on the (M, Q) cost, then the pairs turned back to "
        "(query, target) and sorted by query.",
    ),
    BlindCase(
        CHECK,
        "gather_with_optional_weights",
        match_gather_with_weights,
        "correct",
        "The class probabilities gathered per pair, broadcasting for L1; class_weight and "
        "box_weight as extra arguments with the book's defaults.",
    ),
]
