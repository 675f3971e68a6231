"""Blind cases for check_hungarian_matching (chapter 19), written from the chapter's text only."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits, boxes, target_labels, target_boxes):
    logits, boxes, target_boxes = logits.detach(), boxes.detach(), target_boxes.detach()
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)


def _as_long(rows, cols):
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---- mistakes -------------------------------------------------------------------------------


def greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used, rows = set(), []
    for j in range(cost.shape[1]):
        for q in cost[:, j].argsort().tolist():
            if q not in used:
                used.add(q)
                rows.append(q)
                break
    return _as_long(rows, list(range(cost.shape[1])))


def largest_cost(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return _as_long(*linear_sum_assignment(cost.detach().numpy(), maximize=True))


def best_object_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    cols = cost.argmin(dim=1)  # (Q,): every query takes its cheapest object
    return torch.arange(cost.shape[0]), cols


def best_query_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return cost.argmin(dim=0), torch.arange(cost.shape[1])  # a query may be used twice


def indices_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = linear_sum_assignment(
        _cost(logits, boxes, target_labels, target_boxes).detach().numpy()
    )
    return _as_long(cols, rows)


def log_probability_class_cost(logits, boxes, target_labels, target_boxes):
    cost = -logits.log_softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def l2_box_cost(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def weight_on_class_cost(logits, boxes, target_labels, target_boxes):
    cost = -5 * logits.softmax(-1)[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def raw_logits_class_cost(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # no softmax
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def probability_added(logits, boxes, target_labels, target_boxes):
    cost = logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


# ---- reader's slip ------------------------------------------------------------------------------


def pairs_tensor(logits, boxes, target_labels, target_boxes):
    rows, cols = linear_sum_assignment(
        _cost(logits, boxes, target_labels, target_boxes).detach().numpy()
    )
    return torch.stack(_as_long(rows, cols), dim=1)  # (M, 2) pairs


# ---- correct variants ---------------------------------------------------------------------------


def scipy_on_own_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    p = torch.softmax(logits, dim=-1)
    class_cost = -p.index_select(1, target_labels)  # (Q, M)
    box_cost = (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)  # (Q, M)
    rows, cols = linear_sum_assignment((class_cost + 5.0 * box_cost).detach().cpu().numpy())
    return torch.from_numpy(rows).long(), torch.from_numpy(cols).long()


def brute_force_by_object(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes).double()
    Q, M = cost.shape
    best, best_total = None, float("inf")
    for qs in itertools.permutations(range(Q), M):
        total = float(sum(cost[q, j] for j, q in enumerate(qs)))
        if total < best_total:
            best, best_total = qs, total
    return torch.tensor(best, dtype=torch.long), torch.arange(M)  # in object order


def transposed_problem(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q): objects choose queries
    obj, query = linear_sum_assignment(cost.detach().numpy())
    order = query.argsort()  # list them by query, as scipy would for the (Q, M) problem
    return torch.as_tensor(query[order]).long(), torch.as_tensor(obj[order]).long()


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        greedy,
        "mistake",
        "I gave each object in turn its cheapest query that was still free",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        largest_cost,
        "mistake",
        "I called linear_sum_assignment with maximize=True",
    ),
    BlindCase(
        CHECK,
        "best_object_per_query",
        best_object_per_query,
        "mistake",
        "I took the argmin over the objects for every query, one match per query",
    ),
    BlindCase(
        CHECK,
        "best_query_per_object",
        best_query_per_object,
        "mistake",
        "I took the argmin over the queries for every object, so one query can match two objects",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        indices_swapped,
        "mistake",
        "I returned (target_index, query_index), the two arrays in the other order",
    ),
    BlindCase(
        CHECK,
        "log_probability_class_cost",
        log_probability_class_cost,
        "mistake",
        "I used the negative log-probability of the class, as in the loss, instead of -p",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        l2_box_cost,
        "mistake",
        "I used torch.cdist's default p=2, the Euclidean distance, instead of L1",
    ),
    BlindCase(
        CHECK,
        "weight_on_class_cost",
        weight_on_class_cost,
        "mistake",
        "I put the weight 5 on the class cost instead of the box cost",
    ),
    BlindCase(
        CHECK,
        "raw_logits_class_cost",
        raw_logits_class_cost,
        "mistake",
        "I used the raw logits of the classes instead of their softmax probabilities",
    ),
    BlindCase(
        CHECK,
        "probability_added",
        probability_added,
        "mistake",
        "I added p instead of -p, so a likely class makes a match more expensive",
    ),
    BlindCase(
        CHECK,
        "pairs_tensor",
        pairs_tensor,
        "mistake",
        "I returned one (M, 2) tensor of pairs instead of the two index tensors",
    ),
    BlindCase(
        CHECK,
        "scipy_on_own_cost",
        scipy_on_own_cost,
        "correct",
        "I built the cost with index_select and a broadcast L1 distance and called linear_sum_assignment",
    ),
    BlindCase(
        CHECK,
        "brute_force_by_object",
        brute_force_by_object,
        "correct",
        "I tried every assignment with itertools.permutations and returned the pairs in object order",
    ),
    BlindCase(
        CHECK,
        "transposed_problem",
        transposed_problem,
        "correct",
        "I solved the (M, Q) problem of objects choosing queries and sorted the pairs by query",
    ),
]
