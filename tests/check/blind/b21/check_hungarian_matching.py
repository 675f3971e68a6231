"""Blind set B21, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

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


def _solve(cost: Tensor, **kw) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy(), **kw)
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    q_idx, t_idx = [], []
    for _ in range(len(target_labels)):  # take the cheapest pair left, again and again
        flat = int(cost.argmin())
        q, t = divmod(flat, cost.shape[1])
        q_idx.append(q)
        t_idx.append(t)
        cost[q, :] = float("inf")
        cost[:, t] = float("inf")
    order = sorted(range(len(q_idx)), key=lambda i: q_idx[i])
    return torch.tensor([q_idx[i] for i in order]), torch.tensor([t_idx[i] for i in order])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return _solve(cost, maximize=True)  # "the best match" read as the largest


def match_argmin_per_target(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    query = cost.argmin(dim=0)  # each object its cheapest query, queries may repeat
    return query, torch.arange(len(target_labels))


def match_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    targets, queries = _solve(cost.T)  # (M, Q): rows are the objects
    return targets, queries  # returned in the solver's order, objects first


def match_log_prob(logits, boxes, target_labels, target_boxes):
    log_prob = logits.log_softmax(-1)  # -log p, as in the loss
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # no softmax
    return _solve(cost)


def match_l2(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2 by default
    return _solve(cost)


def match_no_box_weight(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)  # forgot the 5
    return _solve(cost)


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # sign dropped
    return _solve(cost)


def match_softmax_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # over the queries
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_label_shift(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    # thought "no object" is class 0, so class k sits in column k + 1
    cost = -prob[:, target_labels + 1] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_mean_abs(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # mean, not sum
    return _solve(-prob[:, target_labels] + 5 * l1)


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Every ordered choice of M queries tried; the cheapest kept."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_total = None, float("inf")
    for queries in itertools.permutations(range(Q), M):
        total = float(cost[list(queries), list(range(M))].sum())
        if total < best_total:
            best, best_total = queries, total
    pairs = sorted(zip(best, range(M)))
    return torch.tensor([q for q, _ in pairs]), torch.tensor([t for _, t in pairs])


def match_broadcast_cost(logits, boxes, target_labels, target_boxes):
    """The cost built by broadcasting (Q, 1, 4) - (1, M, 4), probabilities via exp(log_softmax)."""
    prob = torch.exp(torch.log_softmax(logits, dim=-1))
    one_hot = torch.nn.functional.one_hot(target_labels, logits.shape[-1]).to(prob.dtype)
    cost_class = -(prob @ one_hot.T)  # (Q, M)
    cost_box = (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)
    return _solve(cost_class + 5.0 * cost_box)


def match_transposed_back(logits, boxes, target_labels, target_boxes):
    """Solved on the (M, Q) cost, the pairs put back as (query, object) sorted by object."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    targets, queries = _solve(cost.T)
    return queries, targets


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "took the cheapest remaining pair again and again (greedy)",
    ),
    BlindCase(
        CHECK, "maximize", match_maximize, "mistake", "linear_sum_assignment(..., maximize=True)"
    ),
    BlindCase(
        CHECK,
        "argmin_per_target",
        match_argmin_per_target,
        "mistake",
        "each object takes its cheapest query, no one-to-one constraint",
    ),
    BlindCase(
        CHECK,
        "swapped_indices",
        match_swapped,
        "mistake",
        "solved the transposed cost and returned (objects, queries)",
    ),
    BlindCase(CHECK, "log_prob_cost", match_log_prob, "mistake", "class cost -log p instead of -p"),
    BlindCase(
        CHECK,
        "raw_logits_cost",
        match_raw_logits,
        "mistake",
        "class cost from the logits, without the softmax",
    ),
    BlindCase(
        CHECK, "l2_box_cost", match_l2, "mistake", "torch.cdist without p=1: Euclidean box distance"
    ),
    BlindCase(
        CHECK,
        "no_box_weight",
        match_no_box_weight,
        "mistake",
        "forgot the weight 5 on the box cost",
    ),
    BlindCase(CHECK, "plus_prob", match_plus_prob, "mistake", "class cost +p instead of -p"),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_queries,
        "mistake",
        "softmax(0), over the queries",
    ),
    BlindCase(
        CHECK,
        "label_shift",
        match_label_shift,
        "mistake",
        "indexed class k + 1, thinking 'no object' is column 0",
    ),
    BlindCase(
        CHECK,
        "mean_abs_box",
        match_mean_abs,
        "mistake",
        "L1 as the mean of the four differences, not their sum",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "tried every assignment with itertools.permutations",
    ),
    BlindCase(
        CHECK,
        "broadcast_one_hot",
        match_broadcast_cost,
        "correct",
        "cost by broadcasting and a one-hot product; exp(log_softmax)",
    ),
    BlindCase(
        CHECK,
        "transposed_sorted_by_object",
        match_transposed_back,
        "correct",
        "solved on cost.T, returned (query, object) pairs ordered by object",
    ),
]
