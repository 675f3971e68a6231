"""Blind set B9, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)


def _assign(cost: Tensor, maximize: bool = False) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy(), maximize=maximize)
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used, pairs = set(), []
    for m in range(cost.shape[1]):  # each object takes its cheapest free query
        order = cost[:, m].argsort().tolist()
        q = next(q for q in order if q not in used)
        used.add(q)
        pairs.append((q, m))
    pairs.sort()
    return torch.tensor([p[0] for p in pairs]), torch.tensor([p[1] for p in pairs])


def match_maximize(logits, boxes, target_labels, target_boxes):
    return _assign(_cost(logits, boxes, target_labels, target_boxes), maximize=True)


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return cost.argmin(dim=0), torch.arange(cost.shape[1])  # a query may be used twice


def match_swapped_outputs(logits, boxes, target_labels, target_boxes):
    rows, cols = _assign(_cost(logits, boxes, target_labels, target_boxes).T)  # (M, Q)
    return rows, cols  # rows are objects here, cols are queries


def match_neg_log_prob(logits, boxes, target_labels, target_boxes):
    log_prob = logits.log_softmax(-1)
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # sign slip
    return _assign(cost)


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # default p=2
    return _assign(cost)


def match_no_box_weight(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_mean_l1(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # mean over 4 coords
    return _assign(-prob[:, target_labels] + 5 * l1)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_softmax_without_no_object(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # "no object" is never a target class
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_queries = None, None
    for queries in itertools.permutations(range(Q), M):
        total = float(sum(cost[q, m] for m, q in enumerate(queries)))
        if best is None or total < best:
            best, best_queries = total, queries
    pairs = sorted((q, m) for m, q in enumerate(best_queries))
    return torch.tensor([p[0] for p in pairs]), torch.tensor([p[1] for p in pairs])


def match_transposed_cost(logits, boxes, target_labels, target_boxes):
    prob = logits.double().softmax(-1)
    l1 = (target_boxes[:, None, :].double() - boxes[None, :, :].double()).abs().sum(-1)
    cost = -prob[:, target_labels].T + 5.0 * l1  # (M, Q)
    objects, queries = linear_sum_assignment(cost.numpy())
    order = queries.argsort()
    return (
        torch.as_tensor(queries[order], dtype=torch.long),
        torch.as_tensor(objects[order], dtype=torch.long),
    )


def match_one_hot_einsum(logits, boxes, target_labels, target_boxes):
    one_hot = torch.nn.functional.one_hot(target_labels, logits.shape[-1]).to(logits.dtype)
    cost_class = -torch.einsum("qk,mk->qm", logits.softmax(-1), one_hot)
    cost_box = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(-1)
    return _assign(cost_class + 5.0 * cost_box)


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "each object in turn takes its cheapest query not yet taken (greedy, not Hungarian)",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "linear_sum_assignment(cost, maximize=True): the largest total cost",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "cost.argmin(dim=0): each object gets its best query, two objects may share one",
    ),
    BlindCase(
        CHECK,
        "swapped_indices",
        match_swapped_outputs,
        "mistake",
        "I built the cost as (M, Q) and returned linear_sum_assignment's (rows, cols) as "
        "(query_index, target_index), so the two are swapped",
    ),
    BlindCase(
        CHECK,
        "neg_log_prob",
        match_neg_log_prob,
        "mistake",
        "the class cost is -log p (as in the loss) instead of -p",
    ),
    BlindCase(
        CHECK,
        "raw_logits",
        match_raw_logits,
        "mistake",
        "the class cost uses the raw logits, no softmax",
    ),
    BlindCase(
        CHECK,
        "plus_prob",
        match_plus_prob,
        "mistake",
        "sign slip: + p of the object's class instead of - p",
    ),
    BlindCase(
        CHECK,
        "l2_boxes",
        match_l2_boxes,
        "mistake",
        "torch.cdist without p=1: the Euclidean distance between boxes instead of L1",
    ),
    BlindCase(
        CHECK, "box_weight_1", match_no_box_weight, "mistake", "I left out the weight 5 on the L1"
    ),
    BlindCase(
        CHECK,
        "mean_l1",
        match_mean_l1,
        "mistake",
        "the L1 cost is the mean over the 4 coordinates instead of their sum",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "logits.softmax(0): the probabilities are taken over the queries, not the classes",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        match_softmax_without_no_object,
        "mistake",
        "I drop the no-object column before the softmax, so p is renormalized over the K real "
        "classes",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "tries every injective assignment of objects to queries with itertools.permutations",
    ),
    BlindCase(
        CHECK,
        "transposed_cost_float64",
        match_transposed_cost,
        "correct",
        "cost built as (M, Q) in float64, linear_sum_assignment, swapped back and sorted by query",
    ),
    BlindCase(
        CHECK,
        "one_hot_einsum",
        match_one_hot_einsum,
        "correct",
        "class cost as an einsum with one-hot targets, broadcast L1 summed over coordinates",
    ),
]
