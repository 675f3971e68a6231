"""Blind cases for check_hungarian_matching (chapter 19)."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)[:, target_labels]  # (Q, M)
    l1 = torch.cdist(boxes, target_boxes, p=1)  # (Q, M)
    return -prob + 5 * l1


def _as_tensors(rows, cols):
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


def hm_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    rows, cols = [], []
    for j in range(cost.shape[1]):  # each object takes its cheapest free query
        i = int(cost[:, j].argmin())
        rows.append(i)
        cols.append(j)
        cost[i, :] = float("inf")
    return _as_tensors(rows, cols)


def hm_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return _as_tensors(*linear_sum_assignment(cost.detach().numpy(), maximize=True))


def hm_argmin_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return torch.arange(cost.shape[0]), cost.argmin(dim=1)  # every query gets its best object


def hm_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = linear_sum_assignment(
        _cost(logits, boxes, target_labels, target_boxes).detach().numpy()
    )
    return _as_tensors(cols, rows)


def hm_log_prob_cost(logits, boxes, target_labels, target_boxes):
    logp = logits.log_softmax(-1)[:, target_labels]  # log p instead of p
    cost = -logp + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_tensors(*linear_sum_assignment(cost.detach().numpy()))


def hm_l2_box_cost(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # Euclidean
    return _as_tensors(*linear_sum_assignment(cost.detach().numpy()))


def hm_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(dim=0)[:, target_labels]
    cost = -prob + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_tensors(*linear_sum_assignment(cost.detach().numpy()))


def hm_box_weight_on_class(logits, boxes, target_labels, target_boxes):
    cost = -5 * logits.softmax(-1)[:, target_labels] + torch.cdist(
        boxes, target_boxes, p=1
    )  # weights swapped
    return _as_tensors(*linear_sum_assignment(cost.detach().numpy()))


def hm_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # no softmax
    return _as_tensors(*linear_sum_assignment(cost.detach().numpy()))


def hm_stacked_pairs(logits, boxes, target_labels, target_boxes):
    rows, cols = linear_sum_assignment(
        _cost(logits, boxes, target_labels, target_boxes).detach().numpy()
    )
    return torch.stack(_as_tensors(rows, cols), dim=1)  # one (M, 2) tensor


def hm_brute_force(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor):
    Q, M = logits.shape[0], len(target_labels)
    prob = torch.softmax(logits, dim=-1)
    cost = torch.empty(Q, M, dtype=logits.dtype)
    for i in range(Q):
        for j in range(M):
            l1 = (boxes[i] - target_boxes[j]).abs().sum()
            cost[i, j] = -prob[i, target_labels[j]] + 5.0 * l1
    best, best_total = None, float("inf")
    for queries in itertools.permutations(range(Q), M):  # query for object 0, 1, ...
        total = sum(float(cost[q, j]) for j, q in enumerate(queries))
        if total < best_total:
            best, best_total = queries, total
    pairs = sorted(zip(best, range(M)))
    return (
        torch.tensor([p[0] for p in pairs], dtype=torch.long),
        torch.tensor([p[1] for p in pairs], dtype=torch.long),
    )


def hm_by_target_order(logits, boxes, target_labels, target_boxes, box_weight: float = 5.0):
    prob = logits.softmax(-1).index_select(1, target_labels)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)
    cost = (box_weight * l1 - prob).T  # (M, Q): objects as rows
    obj, query = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.from_numpy(query).long(), torch.from_numpy(obj).long()  # listed object by object


CASES = [
    BlindCase(
        CHECK,
        "greedy_matching",
        hm_greedy,
        "mistake",
        "matches greedily: each object in turn takes the cheapest query still free",
    ),
    BlindCase(
        CHECK,
        "maximizes_cost",
        hm_maximize,
        "mistake",
        "calls linear_sum_assignment with maximize=True, taking the largest cost",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        hm_argmin_per_query,
        "mistake",
        "gives every query its cheapest object with argmin, not a one-to-one matching",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        hm_swapped,
        "mistake",
        "returns (target_index, query_index) instead of (query_index, target_index)",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        hm_log_prob_cost,
        "mistake",
        "uses -log p instead of -p as the class cost",
    ),
    BlindCase(
        CHECK,
        "euclidean_box_cost",
        hm_l2_box_cost,
        "mistake",
        "uses the Euclidean distance between boxes instead of L1",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        hm_softmax_over_queries,
        "mistake",
        "takes the softmax of the logits over dim=0, the queries, instead of the classes",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        hm_box_weight_on_class,
        "mistake",
        "puts the weight 5 on the class cost and 1 on the box cost",
    ),
    BlindCase(
        CHECK,
        "logits_not_probabilities",
        hm_raw_logits,
        "mistake",
        "uses the raw logit of the object's class instead of its softmax probability",
    ),
    BlindCase(
        CHECK,
        "slip_one_stacked_tensor",
        hm_stacked_pairs,
        "mistake",
        "returns one (M, 2) tensor of pairs instead of two index tensors",
    ),
    BlindCase(
        CHECK,
        "brute_force_permutations",
        hm_brute_force,
        "correct",
        "builds the cost with loops and tries every assignment with itertools.permutations",
    ),
    BlindCase(
        CHECK,
        "objects_as_rows_target_order",
        hm_by_target_order,
        "correct",
        "runs linear_sum_assignment on the transposed (M, Q) cost and returns the pairs in object order, with an optional box_weight",
    ),
]
