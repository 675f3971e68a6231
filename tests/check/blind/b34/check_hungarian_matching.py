"""Blind set B34, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> Tensor:
    prob = logits.softmax(-1)
    return -prob[:, labels] + 5 * torch.cdist(boxes, tboxes, p=1)  # (Q, M)


def _solve(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used: set[int] = set()
    q_idx, t_idx = [], []
    for m in range(cost.shape[1]):  # each object takes the cheapest free query
        for q in cost[:, m].argsort().tolist():
            if q not in used:
                used.add(q)
                q_idx.append(q)
                t_idx.append(m)
                break
    return torch.tensor(q_idx), torch.tensor(t_idx)


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return cost.argmin(dim=0), torch.arange(cost.shape[1])


def match_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = _solve(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


def match_log_prob(logits, boxes, target_labels, target_boxes):
    logp = logits.log_softmax(-1)
    cost = -logp[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_no_box_weight(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)
    return _solve(cost)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_weights_swapped(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -5 * prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_mean_abs(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)
    return _solve(-prob[:, target_labels] + 5 * l1)


def match_labels_as_rows(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[target_labels].T + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)?
    return _solve(cost)


# ---------------------------------------------------------------- correct variants


def match_broadcast(logits, boxes, target_labels, target_boxes):
    prob = torch.softmax(logits, dim=-1)
    class_cost = -prob.index_select(1, target_labels)
    box_cost = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(-1)
    return _solve(class_cost + 5.0 * box_cost)


def match_brute_force(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).double()
    Q, M = cost.shape
    best, best_qs = float("inf"), None
    for qs in itertools.permutations(range(Q), M):
        total = float(cost[list(qs), list(range(M))].sum())
        if total < best:
            best, best_qs = total, qs
    pairs = sorted(zip(best_qs, range(M)))
    return torch.tensor([q for q, _ in pairs]), torch.tensor([m for _, m in pairs])


def match_transposed_solver(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    obj, qry = linear_sum_assignment(cost.T.numpy())  # objects as rows
    order = qry.argsort()
    return torch.as_tensor(qry[order]).long(), torch.as_tensor(obj[order]).long()


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "each object takes the cheapest query still free, in order",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "for each object I took the query of least cost",
    ),
    BlindCase(CHECK, "swapped", match_swapped, "mistake", "I returned (target_index, query_index)"),
    BlindCase(
        CHECK,
        "log_prob",
        match_log_prob,
        "mistake",
        "I used -log p for the class cost, as in the loss",
    ),
    BlindCase(
        CHECK,
        "plus_prob",
        match_plus_prob,
        "mistake",
        "I added the probability instead of subtracting it",
    ),
    BlindCase(
        CHECK,
        "no_box_weight",
        match_no_box_weight,
        "mistake",
        "I forgot the weight 5 on the box distance",
    ),
    BlindCase(
        CHECK,
        "l2_boxes",
        match_l2_boxes,
        "mistake",
        "torch.cdist without p=1, so Euclidean distance",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0",
    ),
    BlindCase(
        CHECK,
        "raw_logits",
        match_raw_logits,
        "mistake",
        "I used the logits as the class score, without softmax",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        match_weights_swapped,
        "mistake",
        "I put the 5 on the class term instead of the box term",
    ),
    BlindCase(
        CHECK,
        "mean_abs",
        match_mean_abs,
        "mistake",
        "my L1 is the mean of the four absolute differences",
    ),
    BlindCase(
        CHECK,
        "labels_as_rows",
        match_labels_as_rows,
        "mistake",
        "I indexed prob[target_labels] and transposed it",
    ),
    BlindCase(
        CHECK,
        "broadcast",
        match_broadcast,
        "correct",
        "index_select for the class cost, broadcasting for L1, then scipy",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "I try every assignment of objects to distinct queries",
    ),
    BlindCase(
        CHECK,
        "transposed_solver",
        match_transposed_solver,
        "correct",
        "scipy on the (M, Q) cost, then sorted back by query",
    ),
]
