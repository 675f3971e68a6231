"""Blind set B15, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

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


def _assign(cost: Tensor, maximize: bool = False) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy(), maximize=maximize)
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    q_idx, t_idx = [], []
    for _ in range(len(target_labels)):  # take the cheapest pair, cross out its row and column
        flat = int(cost.argmin())
        q, t = divmod(flat, cost.shape[1])
        q_idx.append(q)
        t_idx.append(t)
        cost[q, :] = float("inf")
        cost[:, t] = float("inf")
    order = torch.tensor(q_idx).argsort()
    return torch.tensor(q_idx)[order], torch.tensor(t_idx)[order]


def match_largest_cost(logits, boxes, target_labels, target_boxes):
    return _assign(_cost(logits, boxes, target_labels, target_boxes), maximize=True)


def match_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    t_idx = cost.argmin(dim=1)  # each query its best object
    return torch.arange(len(t_idx)), t_idx


def match_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = _assign(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows  # (target, query)


def match_log_prob(logits, boxes, target_labels, target_boxes):
    cost = -logits.log_softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # sign slip
    return _assign(cost)


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2 by default
    return _assign(cost)


def match_box_weight_on_class(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -5 * prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_cost_transposed(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    cols, rows = _assign(cost.T)  # solved for (M, Q), read back in the wrong order
    return cols, rows


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # over the queries
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_class_by_position(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    M = len(target_labels)
    cost = -prob[:, :M] + 5 * torch.cdist(boxes, target_boxes, p=1)  # class j for object j
    return _assign(cost)


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Tries every assignment of objects to distinct queries; sorted by query."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_perm = float("inf"), None
    cols = torch.arange(M)
    for perm in itertools.permutations(range(Q), M):
        total = cost[list(perm), cols].sum().item()
        if total < best:
            best, best_perm = total, perm
    q = torch.tensor(best_perm, dtype=torch.long)
    order = q.argsort()
    return q[order], cols[order]


def match_explicit_l1(logits, boxes, target_labels, target_boxes, box_weight: float = 5.0):
    """The L1 distance by broadcasting, the class cost by index_select; numpy via tolist."""
    probs = torch.softmax(logits, dim=1)
    class_cost = -probs.index_select(1, target_labels)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)
    rows, cols = linear_sum_assignment((class_cost + box_weight * l1).tolist())
    return torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)


def match_transposed_solved(logits, boxes, target_labels, target_boxes):
    """Solves the (M, Q) problem and reads it back the right way round."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    t_idx, q_idx = _assign(cost.T)
    order = q_idx.argsort()
    return q_idx[order], t_idx[order]


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "I matched greedily: the cheapest pair first, then the cheapest among the rest.",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        match_largest_cost,
        "mistake",
        "I called linear_sum_assignment with maximize=True.",
    ),
    BlindCase(
        CHECK,
        "one_match_per_query",
        match_per_query,
        "mistake",
        "I gave every query its cheapest object with argmin over dim 1.",
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
        "I used -log p as the class cost, as in the loss, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "class_cost_sign",
        match_plus_prob,
        "mistake",
        "I added the probability instead of subtracting it.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        match_l2_boxes,
        "mistake",
        "I used torch.cdist without p=1, the L2 distance between boxes.",
    ),
    BlindCase(
        CHECK,
        "weight_on_class",
        match_box_weight_on_class,
        "mistake",
        "I put the weight 5 on the class cost instead of the box cost.",
    ),
    BlindCase(
        CHECK,
        "transposed_read_wrong",
        match_cost_transposed,
        "mistake",
        "I solved the transposed (M, Q) cost and returned its rows as query indices.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0, the queries, instead of the classes.",
    ),
    BlindCase(
        CHECK,
        "class_by_object_position",
        match_class_by_position,
        "mistake",
        "I took the first M class columns, prob[:, :M], instead of the objects' labels.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Tries every assignment with itertools.permutations; pairs sorted by query.",
    ),
    BlindCase(
        CHECK,
        "broadcast_l1",
        match_explicit_l1,
        "correct",
        "The L1 distance by broadcasting, index_select for the class cost, an extra box_weight "
        "argument with default 5.",
    ),
    BlindCase(
        CHECK,
        "transposed_solved_right",
        match_transposed_solved,
        "correct",
        "Solves the (M, Q) problem and swaps the results back, sorted by query.",
    ),
]
