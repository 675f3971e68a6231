"""Blind set B13, check_hungarian_matching (chapter 19): DETR matchings as readers write them."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> Tensor:
    """The right cost (Q, M), shared by the mistakes that are elsewhere."""
    prob = logits.softmax(-1)
    return -prob[:, labels] + 5 * torch.cdist(boxes, tboxes, p=1)


def _lsa(cost: Tensor, maximize: bool = False) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy(), maximize=maximize)
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    cost = _cost(logits, boxes, labels, tboxes).clone()
    queries, targets = [], []
    for _ in range(len(labels)):  # take the cheapest pair, remove its row and column
        flat = int(cost.argmin())
        q, t = divmod(flat, cost.shape[1])
        queries.append(q)
        targets.append(t)
        cost[q, :] = float("inf")
        cost[:, t] = float("inf")
    return torch.tensor(queries), torch.tensor(targets)


def match_maximize(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    return _lsa(_cost(logits, boxes, labels, tboxes), maximize=True)


def match_argmin_per_target(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    cost = _cost(logits, boxes, labels, tboxes)
    return cost.argmin(dim=0), torch.arange(len(labels))  # the best query for each object


def match_swapped(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    rows, cols = _lsa(_cost(logits, boxes, labels, tboxes))
    return cols, rows


def match_logits_not_probs(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    cost = -logits[:, labels] + 5 * torch.cdist(boxes, tboxes, p=1)
    return _lsa(cost)


def match_plus_prob(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    cost = logits.softmax(-1)[:, labels] + 5 * torch.cdist(boxes, tboxes, p=1)
    return _lsa(cost)


def match_l2_boxes(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    cost = -logits.softmax(-1)[:, labels] + 5 * torch.cdist(boxes, tboxes)  # p=2 by default
    return _lsa(cost)


def match_no_box_weight(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    cost = -logits.softmax(-1)[:, labels] + torch.cdist(boxes, tboxes, p=1)
    return _lsa(cost)


def match_softmax_over_queries(
    logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor
) -> tuple:
    cost = -logits.softmax(0)[:, labels] + 5 * torch.cdist(boxes, tboxes, p=1)
    return _lsa(cost)


def match_transposed_cost_rows_as_queries(
    logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor
) -> tuple:
    cost = _cost(logits, boxes, labels, tboxes)
    targets, queries = _lsa(cost.T)
    return targets, queries  # forgot that the rows are now the objects


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    """Try every assignment of the M objects to distinct queries."""
    cost = _cost(logits, boxes, labels, tboxes)
    Q, M = cost.shape
    best, best_perm = float("inf"), None
    for perm in itertools.permutations(range(Q), M):
        total = sum(cost[q, t].item() for t, q in enumerate(perm))
        if total < best:
            best, best_perm = total, perm
    return torch.tensor(best_perm, dtype=torch.long), torch.arange(M)


def match_on_transpose(logits: Tensor, boxes: Tensor, labels: Tensor, tboxes: Tensor) -> tuple:
    """linear_sum_assignment on the (M, Q) cost, indices put back in the asked order."""
    log_p = logits.log_softmax(-1)
    cost = -log_p.exp()[:, labels].T + 5 * (boxes[None] - tboxes[:, None]).abs().sum(-1)
    targets, queries = _lsa(cost)
    return queries, targets


def match_sorted_by_query(
    logits: Tensor,
    boxes: Tensor,
    labels: Tensor,
    tboxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple:
    """Extra weights with defaults, in float64, pairs sorted by the query index."""
    prob = torch.softmax(logits.double(), dim=-1)
    l1 = (boxes.double().unsqueeze(1) - tboxes.double().unsqueeze(0)).abs().sum(-1)
    cost = -class_weight * prob.index_select(1, labels) + box_weight * l1
    rows, cols = _lsa(cost)
    order = torch.argsort(rows)
    return rows[order], cols[order]


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "I matched greedily: the cheapest pair first, then the cheapest of what is left.",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_target,
        "mistake",
        "For each object I took its cheapest query; two objects can get the same query.",
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
        "logits_in_class_cost",
        match_logits_not_probs,
        "mistake",
        "I used -logits[:, labels] as the class cost, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "plus_probability",
        match_plus_prob,
        "mistake",
        "I added the probability instead of subtracting it.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "I used torch.cdist's default p=2, Euclidean instead of L1.",
    ),
    BlindCase(
        CHECK,
        "no_box_weight",
        match_no_box_weight,
        "mistake",
        "I forgot the weight 5 on the L1 box cost.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0, across the queries.",
    ),
    BlindCase(
        CHECK,
        "transposed_cost_not_swapped_back",
        match_transposed_cost_rows_as_queries,
        "mistake",
        "I solved on cost.T and returned the rows as if they were queries.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "I tried every assignment with itertools.permutations (Q is small).",
    ),
    BlindCase(
        CHECK,
        "solve_transposed",
        match_on_transpose,
        "correct",
        "Solved on the (M, Q) cost from log_softmax.exp() and broadcasting, swapped back.",
    ),
    BlindCase(
        CHECK,
        "float64_sorted_weights",
        match_sorted_by_query,
        "correct",
        "Cost in float64 with optional weights, pairs sorted by query index.",
    ),
]
