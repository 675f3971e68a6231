"""Blind set B17, check_hungarian_matching (chapter 19): DETR's bipartite matching as readers
write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The right (Q, M) cost, shared by the mistakes that are elsewhere."""
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _as_long(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    rows, cols = [], []
    for _ in range(len(target_labels)):  # take the cheapest pair left, again and again
        q, m = divmod(int(cost.argmin()), cost.shape[1])
        rows.append(q)
        cols.append(m)
        cost[q, :] = float("inf")
        cost[:, m] = float("inf")
    order = sorted(range(len(rows)), key=lambda i: rows[i])
    return _as_long([rows[i] for i in order], [cols[i] for i in order])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=True)  # the best score
    return _as_long(rows, cols)


def match_argmin_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    best = cost.argmin(dim=1)  # each query's cheapest object
    return torch.arange(cost.shape[0]), best


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    best_query = cost.argmin(dim=0)  # for each object the query closest to it
    return best_query, torch.arange(cost.shape[1])


def match_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    return _as_long(cols, rows)  # (target, query)


def match_logits_not_probs(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_log_prob(logits, boxes, target_labels, target_boxes):
    logp = logits.log_softmax(-1)  # as in the loss
    cost = -logp[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(dim=0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2, the default
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_box_mean(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # mean over 4 coords
    cost = -prob[:, target_labels] + 5 * l1
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_box_weight_missing(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_softmax_without_no_object(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # only the K real classes
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_class_plus(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # sign lost
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


# ---------------------------------------------------------------- correct variants


def match_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every ordered choice of M queries (Q is small); pairs listed object by object."""
    prob = torch.softmax(logits, dim=-1)
    M = len(target_labels)
    cost = -prob[:, target_labels] + 5.0 * (boxes[:, None] - target_boxes[None]).abs().sum(-1)
    cost = cost.detach()
    best, best_queries = None, None
    for queries in itertools.permutations(range(logits.shape[0]), M):
        total = sum(float(cost[q, m]) for m, q in enumerate(queries))
        if best is None or total < best:
            best, best_queries = total, queries
    return torch.tensor(best_queries, dtype=torch.long), torch.arange(M)


def match_scipy_transposed(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """The (M, Q) cost given to scipy, the answer turned back to (query, object) and sorted by
    query; weights as arguments with the chapter's defaults."""
    p = logits.softmax(-1)
    class_cost = -p.T[target_labels]  # (M, Q)
    box_cost = torch.cdist(target_boxes, boxes, p=1)  # (M, Q)
    cost_t = class_weight * class_cost + box_weight * box_cost
    objects, queries = linear_sum_assignment(cost_t.detach().cpu().numpy())
    order = queries.argsort()
    return (
        torch.from_numpy(queries[order]).long(),
        torch.from_numpy(objects[order]).long(),
    )


def match_float64_numpy(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The cost in float64 with torch.gather for the class term and a broadcast L1."""
    logits, boxes, target_boxes = logits.double(), boxes.double(), target_boxes.double()
    prob = logits.softmax(-1)
    index = target_labels.long()[None, :].expand(prob.shape[0], -1)
    class_cost = -prob.gather(1, index)
    box_cost = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(dim=2)
    rows, cols = linear_sum_assignment((class_cost + 5 * box_cost).detach().numpy())
    return torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "I matched greedily: the cheapest (query, object) pair first, then the cheapest among "
        "the rest.",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True, taking the largest total cost.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        match_argmin_per_query,
        "mistake",
        "Each query takes its cheapest object (argmin over objects), Q matches, not one-to-one.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "Each object takes its cheapest query (argmin over queries); two objects can share one.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped,
        "mistake",
        "I returned (target_index, query_index), the two arrays swapped.",
    ),
    BlindCase(
        CHECK,
        "logits_as_class_cost",
        match_logits_not_probs,
        "mistake",
        "I used -logits[:, label] as the class cost, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob,
        "mistake",
        "I used -log p (the loss's term) as the class cost instead of -p.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, across the queries.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "torch.cdist without p=1: the Euclidean distance instead of L1.",
    ),
    BlindCase(
        CHECK,
        "box_l1_mean",
        match_box_mean,
        "mistake",
        "My L1 is the mean of the four coordinate differences, not their sum.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_box_weight_missing,
        "mistake",
        "I forgot the factor 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        match_softmax_without_no_object,
        "mistake",
        "I took the softmax over the K real classes only, leaving out 'no object'.",
    ),
    BlindCase(
        CHECK,
        "class_cost_sign",
        match_class_plus,
        "mistake",
        "I added +p for the class instead of -p.",
    ),
    BlindCase(
        CHECK,
        "brute_force_permutations",
        match_brute_force,
        "correct",
        "Tries every ordered choice of M queries; the pairs come object by object (target "
        "index 0..M-1), not sorted by query.",
    ),
    BlindCase(
        CHECK,
        "scipy_on_transposed_cost",
        match_scipy_transposed,
        "correct",
        "scipy on the (M, Q) cost, turned back to (query, object) and sorted by query; "
        "class_weight and box_weight as arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "float64_gather",
        match_float64_numpy,
        "correct",
        "The cost in float64, the class term by gather, the L1 by broadcasting.",
    ),
]
