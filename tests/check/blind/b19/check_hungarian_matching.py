"""Blind set B19, check_hungarian_matching (chapter 19): DETR's bipartite matching as readers
write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The right cost, shared by the mistakes that are elsewhere."""
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)


def _assign(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    queries, targets = [], []
    for _ in range(len(target_labels)):  # take the cheapest remaining pair, again and again
        q, t = divmod(int(cost.argmin()), cost.shape[1])
        queries.append(q)
        targets.append(t)
        cost[q, :] = float("inf")
        cost[:, t] = float("inf")
    order = sorted(range(len(queries)), key=lambda i: queries[i])
    return torch.tensor([queries[i] for i in order]), torch.tensor([targets[i] for i in order])


def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)  # the best total
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_argmin_per_target(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    query_index = cost.argmin(dim=0)  # the best query for each object
    return query_index, torch.arange(len(target_labels))


def match_swapped(logits, boxes, target_labels, target_boxes):
    query_index, target_index = _assign(_cost(logits, boxes, target_labels, target_boxes))
    return target_index, query_index


def match_log_prob(logits, boxes, target_labels, target_boxes):
    cost_class = -logits.log_softmax(-1)[:, target_labels]  # as in the loss
    return _assign(cost_class + 5 * torch.cdist(boxes, target_boxes, p=1))


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost_class = -logits[:, target_labels]  # forgot the softmax
    return _assign(cost_class + 5 * torch.cdist(boxes, target_boxes, p=1))


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    cost_class = -logits.softmax(-1)[:, target_labels]
    return _assign(cost_class + 5 * torch.cdist(boxes, target_boxes))  # default p=2


def match_box_weight_one(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # (Q, K+1)
    return _assign(-prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1))


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    return _assign(prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1))


def match_no_object_dropped(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # only the K real classes
    return _assign(-prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1))


def match_box_mean_abs(logits, boxes, target_labels, target_boxes):
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # mean over the 4
    return _assign(-logits.softmax(-1)[:, target_labels] + 5 * l1)


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).tolist()
    Q, M = len(cost), len(target_labels)
    best, best_queries = float("inf"), None
    for queries in itertools.permutations(range(Q), M):  # query for object 0, 1, ...
        total = sum(cost[q][t] for t, q in enumerate(queries))
        if total < best:
            best, best_queries = total, queries
    pairs = sorted((q, t) for t, q in enumerate(best_queries))
    return torch.tensor([q for q, _ in pairs]), torch.tensor([t for _, t in pairs])


def match_transposed(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    prob = torch.softmax(logits.double(), dim=-1)
    cost = -class_weight * prob[:, target_labels] + box_weight * (
        (boxes.double()[:, None] - target_boxes.double()[None]).abs().sum(-1)
    )
    t_idx, q_idx = linear_sum_assignment(cost.T.numpy())  # objects as rows
    order = q_idx.argsort()
    return torch.from_numpy(q_idx[order]).long(), torch.from_numpy(t_idx[order]).long()


def match_numpy_cost(logits, boxes, target_labels, target_boxes):
    lg = logits.detach().numpy()
    prob = torch.from_numpy(lg).exp()
    prob = prob / prob.sum(1, keepdim=True)
    onehot = torch.nn.functional.one_hot(target_labels, lg.shape[1]).to(prob.dtype)
    cost_class = -(prob @ onehot.T)  # (Q, M)
    cost_box = torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment((cost_class + 5 * cost_box).numpy())
    return torch.tensor(rows.tolist()), torch.tensor(cols.tolist())


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "I took the cheapest (query, object) pair, removed both, and repeated.",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True, thinking of the best score.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_target,
        "mistake",
        "For each object I took the query of least cost, so one query can get two objects.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped,
        "mistake",
        "I returned (target_index, query_index) instead of (query_index, target_index).",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob,
        "mistake",
        "I used -log p of the class as the class cost, as in the loss.",
    ),
    BlindCase(
        CHECK,
        "no_softmax",
        match_raw_logits,
        "mistake",
        "I used the raw logits for the class cost, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        match_l2_boxes,
        "mistake",
        "I used torch.cdist's default p=2 (Euclidean) instead of the L1 distance.",
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
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0, the queries, instead of the classes.",
    ),
    BlindCase(
        CHECK,
        "class_cost_sign",
        match_plus_prob,
        "mistake",
        "I added +p(class) instead of -p(class) to the cost.",
    ),
    BlindCase(
        CHECK,
        "no_object_left_out_of_softmax",
        match_no_object_dropped,
        "mistake",
        "I left the 'no object' column out before the softmax.",
    ),
    BlindCase(
        CHECK,
        "box_mean_abs",
        match_box_mean_abs,
        "mistake",
        "I took the mean of the four absolute differences instead of their sum.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Tries every injective assignment with itertools.permutations.",
    ),
    BlindCase(
        CHECK,
        "transposed_float64",
        match_transposed,
        "correct",
        "Cost in float64 by broadcasting, objects as rows of linear_sum_assignment, the "
        "result sorted by query; weights as extra arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "one_hot_matmul",
        match_numpy_cost,
        "correct",
        "The softmax by hand, the class cost as a product with one-hot labels.",
    ),
]
