"""Blind set B18, check_hungarian_matching (chapter 19): DETR's one-to-one matching as readers
write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The book's cost, for the mistakes that are elsewhere."""
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _as_long(rows, cols) -> tuple[Tensor, Tensor]:
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    rows, cols = [], []
    for _ in range(len(target_labels)):  # take the cheapest pair left, again and again
        q, m = divmod(int(cost.argmin()), cost.shape[1])
        rows.append(q)
        cols.append(m)
        cost[q, :] = float("inf")
        cost[:, m] = float("inf")
    return _as_long(rows, cols)


def match_largest_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=True)
    return _as_long(rows, cols)


def match_per_object_argmin(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes)
    query = cost.argmin(dim=0)  # the best query of each object
    return query, torch.arange(len(target_labels))


def match_swapped(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.T.detach().numpy())  # objects as rows
    return _as_long(rows, cols)  # (object, query), returned as (query, object)


def match_logits_not_probs(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_log_probs(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost_class = -logits.log_softmax(-1)[:, target_labels]  # the cross-entropy, as in the loss
    cost = cost_class + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_softmax_over_queries(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(dim=0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_l2_boxes(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # default p=2
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_box_weight_one(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_mean_l1(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # mean over 4 numbers
    cost = -prob[:, target_labels] + 5 * l1
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


def match_no_object_dropped_from_softmax(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits[:, :-1].softmax(-1)  # the real classes only
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _as_long(*linear_sum_assignment(cost.detach().numpy()))


# ---------------------------------------------------------------- correct variants


def match_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every ordered choice of M queries, one per object: query_index[k] for object k."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_total = None, float("inf")
    for queries in itertools.permutations(range(Q), M):
        total = float(cost[list(queries), list(range(M))].sum())
        if total < best_total:
            best, best_total = queries, total
    return torch.tensor(best, dtype=torch.long), torch.arange(M)


def match_numpy_float64(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """The cost built in NumPy, float64; weights as extra arguments with defaults."""
    z = logits.detach().double().numpy()
    p = torch.from_numpy(z).softmax(-1).numpy()
    b = boxes.detach().double().numpy()
    t = target_boxes.detach().double().numpy()
    l1 = abs(b[:, None, :] - t[None, :, :]).sum(-1)
    cost = -class_weight * p[:, target_labels.numpy()] + box_weight * l1
    rows, cols = linear_sum_assignment(cost)
    return torch.from_numpy(rows).long(), torch.from_numpy(cols).long()


def match_sorted_by_object(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The transposed problem (objects as rows), returned as (query, object) pairs sorted by
    object."""
    with torch.no_grad():
        prob = torch.softmax(logits, dim=1)
        one_hot = torch.nn.functional.one_hot(target_labels, logits.shape[1]).to(prob.dtype)
        cost_class = -(one_hot @ prob.T)  # (M, Q)
        cost_box = (target_boxes[:, None] - boxes[None]).abs().sum(-1)  # (M, Q)
        objects, queries = linear_sum_assignment((cost_class + 5 * cost_box).numpy())
    return torch.as_tensor(queries).long(), torch.as_tensor(objects).long()


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "I take the cheapest (query, object) pair, remove its row and column, and repeat.",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        match_largest_cost,
        "mistake",
        "I called linear_sum_assignment with maximize=True.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_per_object_argmin,
        "mistake",
        "Each object takes its cheapest query by argmin, so two objects can share a query.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped,
        "mistake",
        "I solved the transposed cost (objects as rows) and returned its (rows, cols) as "
        "(query_index, target_index).",
    ),
    BlindCase(
        CHECK,
        "logits_not_probabilities",
        match_logits_not_probs,
        "mistake",
        "My class cost is minus the raw logit, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "log_probabilities",
        match_log_probs,
        "mistake",
        "I used -log p (the cross-entropy) as the class cost instead of -p.",
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
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "torch.cdist without p=1, so the box cost is the L2 distance.",
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
        "mean_l1",
        match_mean_l1,
        "mistake",
        "My L1 box cost is the mean of the four absolute differences, not their sum.",
    ),
    BlindCase(
        CHECK,
        "no_object_left_out_of_softmax",
        match_no_object_dropped_from_softmax,
        "mistake",
        "I took the softmax over the K real classes only, leaving out the no-object logit.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Tries every ordered choice of M queries; returns the queries in object order, with "
        "target_index = arange(M).",
    ),
    BlindCase(
        CHECK,
        "numpy_float64",
        match_numpy_float64,
        "correct",
        "The cost built in NumPy in float64; class_weight and box_weight as extra arguments "
        "with defaults.",
    ),
    BlindCase(
        CHECK,
        "transposed_sorted_by_object",
        match_sorted_by_object,
        "correct",
        "Solves the (objects, queries) cost, built with one_hot @ prob.T, and returns the "
        "pairs in object order.",
    ),
]
