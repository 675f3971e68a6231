"""Blind set B10, check_hungarian_matching (chapter 19): DETR's Hungarian matching as readers
write it."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The book's cost, shared by the mistakes that are elsewhere: (Q, M)."""
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _as_long(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used, rows = set(), []
    for j in range(cost.shape[1]):  # each object takes the cheapest query still free
        order = cost[:, j].argsort().tolist()
        q = next(q for q in order if q not in used)
        used.add(q)
        rows.append(q)
    return _as_long(rows, list(range(cost.shape[1])))


@torch.no_grad()
def match_maximize(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)  # "best" = largest
    return _as_long(rows, cols)


@torch.no_grad()
def match_one_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    best = cost.argmin(dim=1)  # every query its cheapest object
    return torch.arange(cost.shape[0]), best


@torch.no_grad()
def match_indices_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.numpy())
    return _as_long(cols, rows)  # (target_index, query_index)


@torch.no_grad()
def match_log_prob_cost(logits, boxes, target_labels, target_boxes):
    cost_class = -logits.log_softmax(-1)[:, target_labels]  # the loss's -log p, not -p
    cost = cost_class + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


@torch.no_grad()
def match_logits_no_softmax(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


@torch.no_grad()
def match_l2_box_cost(logits, boxes, target_labels, target_boxes):
    cost_box = torch.cdist(boxes, target_boxes)  # default p=2: Euclidean, not L1
    cost = -logits.softmax(-1)[:, target_labels] + 5 * cost_box
    return _as_long(*linear_sum_assignment(cost.numpy()))


@torch.no_grad()
def match_no_box_weight(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


@torch.no_grad()
def match_l1_mean(logits, boxes, target_labels, target_boxes):
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # mean of the 4, not sum
    cost = -logits.softmax(-1)[:, target_labels] + 5 * l1
    return _as_long(*linear_sum_assignment(cost.numpy()))


@torch.no_grad()
def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # over the queries instead of the classes
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


@torch.no_grad()
def match_no_object_dropped(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # "no object" left out of the softmax
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.numpy()))


@torch.no_grad()
def match_class_cost_plus(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # sign lost
    return _as_long(*linear_sum_assignment(cost.numpy()))


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def match_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Tries every injective assignment of the M objects to the Q queries (Q is small);
    returns the pairs in object order."""
    Q, M = logits.shape[0], len(target_labels)
    p = torch.softmax(logits, dim=1)
    cost = [
        [
            float(-p[q, target_labels[j]] + 5 * (boxes[q] - target_boxes[j]).abs().sum())
            for j in range(M)
        ]
        for q in range(Q)
    ]
    best = min(
        itertools.permutations(range(Q), M),
        key=lambda qs: sum(cost[q][j] for j, q in enumerate(qs)),
    )
    return torch.tensor(best, dtype=torch.long), torch.arange(M)


@torch.no_grad()
def match_transposed_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """linear_sum_assignment on the (M, Q) cost, the result read back the right way round."""
    prob = logits.softmax(-1)
    cost_tq = -prob.T[target_labels] + 5 * torch.cdist(target_boxes, boxes, p=1)  # (M, Q)
    targets, queries = linear_sum_assignment(cost_tq.numpy())
    return torch.from_numpy(queries).long(), torch.from_numpy(targets).long()


@torch.no_grad()
def match_numpy_float64(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """The cost in float64 NumPy with broadcasting; weights as arguments with defaults."""
    lg = logits.double().numpy()
    prob = np.exp(lg - lg.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    labels = target_labels.numpy()
    l1 = np.abs(boxes.double().numpy()[:, None, :] - target_boxes.double().numpy()[None]).sum(-1)
    cost = -class_weight * prob[:, labels] + box_weight * l1
    rows, cols = linear_sum_assignment(cost)
    return torch.tensor(rows), torch.tensor(cols)


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "Greedy: each object in turn takes the cheapest query that is still free.",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        match_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True.",
    ),
    BlindCase(
        CHECK,
        "one_match_per_query",
        match_one_per_query,
        "mistake",
        "Each query takes its cheapest object (argmin over the objects): Q pairs, objects "
        "repeated.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_indices_swapped,
        "mistake",
        "I returned (cols, rows), the object indices first.",
    ),
    BlindCase(
        CHECK,
        "minus_log_prob",
        match_log_prob_cost,
        "mistake",
        "For the class cost I used -log p, as in the training loss, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "logits_without_softmax",
        match_logits_no_softmax,
        "mistake",
        "I used -logits[:, labels] as the class cost, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        match_l2_box_cost,
        "mistake",
        "torch.cdist without p=1, so the box cost is the Euclidean distance.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_no_box_weight,
        "mistake",
        "I left out the factor 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "l1_as_mean",
        match_l1_mean,
        "mistake",
        "My L1 distance is the mean of the four coordinate differences instead of their sum.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=0, across the queries instead of the classes.",
    ),
    BlindCase(
        CHECK,
        "no_object_left_out",
        match_no_object_dropped,
        "mistake",
        "I took the softmax over the K real classes only, dropping the no-object logit.",
    ),
    BlindCase(
        CHECK,
        "class_cost_sign",
        match_class_cost_plus,
        "mistake",
        "I added p instead of subtracting it, so a likely class makes a pair more expensive.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Tries every assignment with itertools.permutations; pairs returned in object order.",
    ),
    BlindCase(
        CHECK,
        "transposed_cost",
        match_transposed_cost,
        "correct",
        "linear_sum_assignment on the (M, Q) cost and the two results swapped back; pairs in "
        "object order.",
    ),
    BlindCase(
        CHECK,
        "numpy_float64",
        match_numpy_float64,
        "correct",
        "The cost in float64 NumPy; class and box weights as arguments with defaults.",
    ),
]
