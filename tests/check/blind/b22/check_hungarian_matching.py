"""Blind set B22, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

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


def _assign(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    q_idx, t_idx = [], []
    for _ in range(len(target_labels)):
        flat = int(cost.argmin())
        q, t = divmod(flat, cost.shape[1])
        q_idx.append(q)
        t_idx.append(t)
        cost[q, :] = float("inf")
        cost[:, t] = float("inf")
    order = sorted(range(len(q_idx)), key=lambda i: q_idx[i])
    return torch.tensor([q_idx[i] for i in order]), torch.tensor([t_idx[i] for i in order])


def match_largest_cost(logits, boxes, target_labels, target_boxes):
    rows, cols = linear_sum_assignment(
        _cost(logits, boxes, target_labels, target_boxes).detach().numpy(), maximize=True
    )
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)  # (Q, M)
    query = cost.argmin(dim=0)  # the best query for each object
    return query, torch.arange(len(target_labels))


def match_swapped_return(logits, boxes, target_labels, target_boxes):
    rows, cols = _assign(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


def match_log_prob_class_cost(logits, boxes, target_labels, target_boxes):
    logp = logits.log_softmax(-1)
    cost = -logp[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_raw_logits_class_cost(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_l2_box_cost(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)
    return _assign(cost)


def match_box_weight_on_class(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -5 * prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_signed_box_difference(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    diff = (boxes[:, None, :] - target_boxes[None, :, :]).sum(-1)  # forgot abs
    return _assign(-prob[:, target_labels] + 5 * diff)


def match_first_m_queries_only(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    M = len(target_labels)
    best, best_perm = float("inf"), None
    for perm in itertools.permutations(range(M)):  # query k gets object perm[k]
        total = sum(float(cost[k, perm[k]]) for k in range(M))
        if total < best:
            best, best_perm = total, perm
    return torch.arange(M), torch.tensor(best_perm, dtype=torch.long)


def match_class_index_shifted(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)[:, 1:]  # drop column 0, thinking it is "no object"
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


# ---------------------------------------------------------------- correct variants


def match_broadcast_cost(logits, boxes, target_labels, target_boxes):
    prob = torch.softmax(logits.float(), dim=-1)
    class_cost = -prob.index_select(1, target_labels.long())  # (Q, M)
    box_cost = (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)  # (Q, M)
    return _assign(class_cost + 5.0 * box_cost)


def match_brute_force(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).tolist()
    Q, M = len(cost), len(target_labels)
    best, best_queries = float("inf"), None
    for queries in itertools.permutations(range(Q), M):  # object j goes to queries[j]
        total = sum(cost[q][j] for j, q in enumerate(queries))
        if total < best:
            best, best_queries = total, queries
    pairs = sorted((q, j) for j, q in enumerate(best_queries))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([j for _, j in pairs], dtype=torch.long),
    )


def match_transposed_problem(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q): objects as rows
    objects, queries = linear_sum_assignment(cost.detach().numpy())
    order = queries.argsort()
    return torch.from_numpy(queries[order]).long(), torch.from_numpy(objects[order]).long()


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "I took the cheapest (query, object) pair, crossed out its row and column, and repeated.",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        match_largest_cost,
        "mistake",
        "linear_sum_assignment(..., maximize=True): I thought the score should be as high as "
        "possible.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "For each object I took the query of least cost, with no one-to-one constraint.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped_return,
        "mistake",
        "I returned (target_index, query_index), the other order.",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob_class_cost,
        "mistake",
        "For the class cost I used -log p (the cross-entropy) instead of -p.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_class_cost",
        match_raw_logits_class_cost,
        "mistake",
        "I used -logits for the class cost and forgot the softmax.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        match_l2_box_cost,
        "mistake",
        "torch.cdist with its default p=2: a Euclidean box distance instead of L1.",
    ),
    BlindCase(
        CHECK,
        "weight_on_class_cost",
        match_box_weight_on_class,
        "mistake",
        "I put the weight 5 on the class cost instead of the box cost.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "softmax(0): the probabilities normalised over the queries, not the classes.",
    ),
    BlindCase(
        CHECK,
        "signed_box_difference",
        match_signed_box_difference,
        "mistake",
        "I summed the coordinate differences without abs, so they can cancel.",
    ),
    BlindCase(
        CHECK,
        "first_m_queries_only",
        match_first_m_queries_only,
        "mistake",
        "My brute force tries permutations of range(M), so only the first M queries can be "
        "matched.",
    ),
    BlindCase(
        CHECK,
        "class_column_shifted",
        match_class_index_shifted,
        "mistake",
        "I dropped column 0 of the probabilities as 'no object'; it is the last column.",
    ),
    BlindCase(
        CHECK,
        "broadcast_cost",
        match_broadcast_cost,
        "correct",
        "The L1 cost by broadcasting and abs().sum(-1), index_select for the class.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Every ordered choice of M of the Q queries with itertools.permutations; pairs sorted "
        "by query.",
    ),
    BlindCase(
        CHECK,
        "transposed_problem",
        match_transposed_problem,
        "correct",
        "linear_sum_assignment on the (M, Q) cost, then swapped back and sorted by query.",
    ),
]
