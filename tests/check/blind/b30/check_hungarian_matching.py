"""Blind set B30, check_hungarian_matching (chapter 19): DETR's one-to-one matching as readers
write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _assign(cost: Tensor) -> tuple[Tensor, Tensor]:
    """A right assignment of a ``(Q, M)`` cost, shared by the mistakes that are in the cost."""
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


def _cost(logits: Tensor, boxes: Tensor, labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The right cost, shared by the mistakes that are in the assignment."""
    return -logits.softmax(-1)[:, labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    queries, targets = [], []
    for _ in range(len(target_labels)):  # take the cheapest pair left, again and again
        flat = int(cost.argmin())
        q, t = divmod(flat, cost.shape[1])
        queries.append(q)
        targets.append(t)
        cost[q, :] = float("inf")
        cost[:, t] = float("inf")
    order = sorted(range(len(queries)), key=lambda i: queries[i])
    return torch.tensor([queries[i] for i in order]), torch.tensor([targets[i] for i in order])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    query_index = cost.argmin(dim=0)  # the best query for each object
    return query_index, torch.arange(len(target_labels))


def match_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = _assign(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


def match_log_prob(logits, boxes, target_labels, target_boxes):
    cost = -logits.log_softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_softmax_without_no_object(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # the "no object" class is never a target
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)
    return _assign(cost)


def match_mean_abs_boxes(logits, boxes, target_labels, target_boxes):
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # (Q, M)
    return _assign(-logits.softmax(-1)[:, target_labels] + 5 * l1)


def match_box_weight_one(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    cost = logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_first_m_queries(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    M = len(target_labels)
    best, best_perm = float("inf"), None
    for perm in itertools.permutations(range(M)):  # query perm[j] takes object j
        total = sum(float(cost[q, j]) for j, q in enumerate(perm))
        if total < best:
            best, best_perm = total, perm
    pairs = sorted((q, j) for j, q in enumerate(best_perm))
    return torch.tensor([q for q, _ in pairs]), torch.tensor([j for _, j in pairs])


# ---------------------------------------------------------------- correct variants


def match_broadcast_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = torch.softmax(logits, dim=-1)  # (Q, K + 1)
    class_cost = -prob.index_select(1, target_labels)  # (Q, M)
    box_cost = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(-1)  # (Q, M)
    rows, cols = linear_sum_assignment((class_cost + 5.0 * box_cost).numpy())
    return torch.from_numpy(rows).long(), torch.from_numpy(cols).long()


def match_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_queries = None, None
    for queries in itertools.permutations(range(Q), M):  # queries[j] takes object j
        total = cost[list(queries), list(range(M))].sum()
        if best is None or total < best:
            best, best_queries = total, queries
    pairs = sorted(zip(best_queries, range(M)))
    return torch.tensor([q for q, _ in pairs]), torch.tensor([t for _, t in pairs])


def match_transposed_then_swapped(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    p = logits.softmax(-1)
    cost_mq = -p[:, target_labels].T + box_weight * torch.cdist(target_boxes, boxes, p=1)
    objects, queries = linear_sum_assignment(cost_mq.numpy())  # (M, Q): one row per object
    order = queries.argsort()  # list the pairs by query
    return torch.as_tensor(queries[order]), torch.as_tensor(objects[order])


CASES = [
    BlindCase(
        CHECK,
        "greedy_cheapest_pair",
        match_greedy,
        "mistake",
        "I took the cheapest (query, object) pair, crossed out its row and column, and repeated.",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I passed maximize=True to linear_sum_assignment.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "For each object I took the query of least cost, so two objects can share a query.",
    ),
    BlindCase(
        CHECK,
        "returns_target_first",
        match_swapped,
        "mistake",
        "I returned (target_index, query_index).",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob,
        "mistake",
        "I used the negative log-probability of the class, as in the loss, for the matching.",
    ),
    BlindCase(
        CHECK,
        "logits_not_probabilities",
        match_raw_logits,
        "mistake",
        "I forgot the softmax and used -logits for the class cost.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        match_softmax_without_no_object,
        "mistake",
        "I took the softmax over the K real classes only, leaving out the no-object column.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "I used torch.cdist with its default p=2 for the box cost.",
    ),
    BlindCase(
        CHECK,
        "mean_abs_box_distance",
        match_mean_abs_boxes,
        "mistake",
        "My L1 takes the mean of the four absolute differences instead of their sum.",
    ),
    BlindCase(
        CHECK,
        "box_weight_one",
        match_box_weight_one,
        "mistake",
        "I forgot the factor 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "plus_probability",
        match_plus_prob,
        "mistake",
        "I added the class probability to the cost instead of subtracting it.",
    ),
    BlindCase(
        CHECK,
        "only_first_m_queries",
        match_first_m_queries,
        "mistake",
        "My brute force tries permutations(range(M)), so only the first M queries can be matched.",
    ),
    BlindCase(
        CHECK,
        "broadcast_cost",
        match_broadcast_cost,
        "correct",
        "The L1 cost by broadcasting and abs().sum(-1), index_select for the class column, "
        "then linear_sum_assignment.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Every ordered choice of M queries with itertools.permutations(range(Q), M), the "
        "cheapest kept.",
    ),
    BlindCase(
        CHECK,
        "object_by_query_cost",
        match_transposed_then_swapped,
        "correct",
        "The cost built as (M, Q), one row per object, and the pairs put back as (query, "
        "object) sorted by query; an extra box_weight argument defaulting to 5.",
    ),
]
