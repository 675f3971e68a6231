"""Blind set B6, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

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


def _box_cost(boxes: Tensor, target_boxes: Tensor) -> Tensor:
    return (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)  # (Q, M)


def _giou(a: Tensor, b: Tensor) -> Tensor:
    """Generalised IoU of every pair of (cx, cy, w, h) boxes, (Q, M)."""

    def corners(x: Tensor) -> Tensor:
        cx, cy, w, h = x.unbind(-1)
        return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1)

    a, b = corners(a), corners(b)
    area_a = (a[:, 2] - a[:, 0]).clamp(min=0) * (a[:, 3] - a[:, 1]).clamp(min=0)
    area_b = (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    union = area_a[:, None] + area_b[None, :] - inter
    lt_c = torch.min(a[:, None, :2], b[None, :, :2])
    rb_c = torch.max(a[:, None, 2:], b[None, :, 2:])
    hull = (rb_c - lt_c).clamp(min=0).prod(-1)
    return inter / union - (hull - union) / hull


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def match_greedy_by_object(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_cost(boxes, target_boxes)
    taken: set[int] = set()
    queries = []
    for j in range(len(target_labels)):  # each object takes the cheapest free query
        order = cost[:, j].argsort().tolist()
        q = next(i for i in order if i not in taken)
        taken.add(q)
        queries.append(q)
    return torch.tensor(queries, dtype=torch.long), torch.arange(len(target_labels))


@torch.no_grad()
def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_cost(boxes, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)  # "best match" = maximum
    return torch.as_tensor(rows), torch.as_tensor(cols)


@torch.no_grad()
def match_transposed_cost(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels].T + 5 * torch.cdist(target_boxes, boxes, p=1)  # (M, Q)
    rows, cols = _assign(cost)  # rows are the objects here
    return rows, cols  # returned as if the rows were the queries


@torch.no_grad()
def match_log_probability(logits, boxes, target_labels, target_boxes):
    cost_class = -logits.log_softmax(-1)[:, target_labels]  # the loss's -log p
    return _assign(cost_class + 5 * _box_cost(boxes, target_boxes))


@torch.no_grad()
def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost_class = -logits[:, target_labels]  # softmax forgotten
    return _assign(cost_class + 5 * _box_cost(boxes, target_boxes))


@torch.no_grad()
def match_detr_giou(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_cost(boxes, target_boxes)
    cost = cost - 2 * _giou(boxes, target_boxes)  # DETR's third cost, weight 2
    return _assign(cost)


@torch.no_grad()
def match_background_first(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost_class = -prob[:, target_labels + 1]  # class 0 read as background, as in torchvision
    return _assign(cost_class + 5 * _box_cost(boxes, target_boxes))


@torch.no_grad()
def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # dim 0: over the queries
    return _assign(-prob[:, target_labels] + 5 * _box_cost(boxes, target_boxes))


@torch.no_grad()
def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    cost_box = torch.cdist(boxes, target_boxes)  # default p=2: Euclidean, not L1
    return _assign(-logits.softmax(-1)[:, target_labels] + 5 * cost_box)


@torch.no_grad()
def match_brute_force_off_by_one(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_cost(boxes, target_boxes)
    Q, M = cost.shape
    best, best_cost = None, float("inf")
    for queries in itertools.permutations(range(Q - 1), M):  # range(Q - 1): the last query lost
        c = sum(float(cost[q, j]) for j, q in enumerate(queries))
        if c < best_cost:
            best, best_cost = queries, c
    return torch.tensor(best, dtype=torch.long), torch.arange(M)


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Every injective assignment of the M objects to the Q queries, the cheapest kept."""
    prob = logits.softmax(dim=-1)
    cost = -prob[:, target_labels] + 5.0 * _box_cost(boxes, target_boxes)  # (Q, M)
    Q, M = cost.shape
    best = min(
        itertools.permutations(range(Q), M),
        key=lambda qs: sum(cost[q, j].item() for j, q in enumerate(qs)),
    )
    pairs = sorted(zip(best, range(M)))  # by query, as linear_sum_assignment returns them
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([j for _, j in pairs], dtype=torch.long),
    )


@torch.no_grad()
def match_object_rows(logits, boxes, target_labels, target_boxes):
    """The cost built as (M, Q), one row per object; the indices swapped back at the end."""
    prob = logits.softmax(-1)  # (Q, K + 1)
    cost = -prob.T[target_labels] + 5 * torch.cdist(target_boxes, boxes, p=1)  # (M, Q)
    obj, qry = linear_sum_assignment(cost.numpy())
    by_query = qry.argsort()
    return torch.from_numpy(qry[by_query]).long(), torch.from_numpy(obj[by_query]).long()


@torch.no_grad()
def match_pairs_in_object_order(logits, boxes, target_labels, target_boxes):
    """linear_sum_assignment on the book's cost, the pairs then listed object by object."""
    cost = -logits.softmax(-1).gather(
        1, target_labels[None].expand(logits.shape[0], -1)
    ) + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = _assign(cost)
    order = cols.argsort()
    return rows[order], cols[order]


CASES = [
    BlindCase(
        CHECK,
        "greedy_by_object",
        match_greedy_by_object,
        "mistake",
        "Each object in turn takes the cheapest query still free: a greedy matching, not the "
        "assignment of least total cost.",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment(cost, maximize=True), thinking of the best match as a "
        "maximum.",
    ),
    BlindCase(
        CHECK,
        "transposed_cost_indices",
        match_transposed_cost,
        "mistake",
        "I built the cost as (M, Q), objects by queries, and returned linear_sum_assignment's "
        "rows as the query indices, though they are the objects.",
    ),
    BlindCase(
        CHECK,
        "log_probability_cost",
        match_log_probability,
        "mistake",
        "I used -log p (the loss's class term) as the class cost instead of -p.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_cost",
        match_raw_logits,
        "mistake",
        "The class cost is -logits[:, labels]: I forgot the softmax.",
    ),
    BlindCase(
        CHECK,
        "detr_giou_term",
        match_detr_giou,
        "mistake",
        "I copied DETR's matcher, which also subtracts 2 * generalised IoU, a cost term the "
        "exercise does not have.",
    ),
    BlindCase(
        CHECK,
        "background_class_first",
        match_background_first,
        "mistake",
        "I read class 0 as background, as in torchvision detectors, and took "
        "prob[:, labels + 1]; here 'no object' is the last class.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "logits.softmax(0): the softmax runs over the queries instead of the classes.",
    ),
    BlindCase(
        CHECK,
        "euclidean_box_cost",
        match_l2_boxes,
        "mistake",
        "torch.cdist(boxes, target_boxes) with its default p=2 gives the Euclidean distance, "
        "not the L1 distance.",
    ),
    BlindCase(
        CHECK,
        "brute_force_last_query_lost",
        match_brute_force_off_by_one,
        "mistake",
        "My brute force tries permutations(range(Q - 1), M), so the last query is never matched.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Brute force over every injective assignment, pairs sorted by query.",
    ),
    BlindCase(
        CHECK,
        "cost_objects_by_queries",
        match_object_rows,
        "correct",
        "The cost built as (M, Q), objects by queries; linear_sum_assignment's two index "
        "arrays swapped back, queries first, and sorted by query.",
    ),
    BlindCase(
        CHECK,
        "pairs_in_object_order",
        match_pairs_in_object_order,
        "correct",
        "linear_sum_assignment on the (Q, M) cost, with the pairs then listed in object order "
        "instead of query order.",
    ),
]
