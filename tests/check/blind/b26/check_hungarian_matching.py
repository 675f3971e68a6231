"""Blind set B26, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _solve(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


def _box_l1(boxes: Tensor, target_boxes: Tensor) -> Tensor:
    return (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)  # (Q, M)


# ---------------------------------------------------------------- mistakes


def match_log_prob(logits, boxes, target_labels, target_boxes):
    cost_class = -logits.log_softmax(-1)[:, target_labels]  # the cross-entropy of the class
    return _solve(cost_class + 5 * _box_l1(boxes, target_boxes))


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost_class = -logits[:, target_labels]
    return _solve(cost_class + 5 * _box_l1(boxes, target_boxes))


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    cost_box = torch.cdist(boxes, target_boxes)  # the distance between the boxes
    return _solve(-logits.softmax(-1)[:, target_labels] + 5 * cost_box)


def match_weight_on_class(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    return _solve(5 * -prob[:, target_labels] + _box_l1(boxes, target_boxes))


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    return _solve(prob[:, target_labels] + 5 * _box_l1(boxes, target_boxes))


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    return _solve(-prob[:, target_labels] + 5 * _box_l1(boxes, target_boxes))


def match_no_object_prob(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # the K real classes only
    return _solve(-prob[:, target_labels] + 5 * _box_l1(boxes, target_boxes))


def match_first_m_queries(logits, boxes, target_labels, target_boxes):
    M = len(target_labels)
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_l1(boxes, target_boxes)
    return _solve(cost[:M])  # the assignment needs a square matrix


def match_per_object_greedy(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_l1(boxes, target_boxes)
    used: set[int] = set()
    queries = []
    for j in range(cost.shape[1]):  # each object takes the cheapest free query
        order = cost[:, j].argsort().tolist()
        q = next(i for i in order if i not in used)
        used.add(q)
        queries.append(q)
    return torch.tensor(queries, dtype=torch.long), torch.arange(cost.shape[1])


def match_box_mean(logits, boxes, target_labels, target_boxes):
    cost_box = (boxes[:, None] - target_boxes[None]).abs().mean(-1)  # the mean L1 error
    return _solve(-logits.softmax(-1)[:, target_labels] + 5 * cost_box)


def match_cost_argmin(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_l1(boxes, target_boxes)
    query_index = cost.argmin(dim=0)  # the best query for each object
    return query_index, torch.arange(cost.shape[1])


def match_target_first(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_l1(boxes, target_boxes)
    rows, cols = _solve(cost.T)  # one row per object
    return rows, cols


def match_cost_only(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _box_l1(boxes, target_boxes)
    rows, cols = _solve(cost)
    return cost[rows, cols].sum(), (rows, cols)


# ---------------------------------------------------------------- correct variants


def match_subset_search(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every assignment searched exactly, object by object, remembering the best cost of the
    remaining objects for each set of queries already used; returned in query order."""
    cost = (
        -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    ).tolist()
    Q, M = len(cost), len(cost[0]) if cost else 0
    memo: dict[tuple[int, int], tuple[float, tuple[int, ...]]] = {}

    def best(j: int, used: int) -> tuple[float, tuple[int, ...]]:
        if j == M:
            return 0.0, ()
        if (j, used) not in memo:
            options = []
            for q in range(Q):
                if not used >> q & 1:
                    rest, chosen = best(j + 1, used | 1 << q)
                    options.append((cost[q][j] + rest, (q, *chosen)))
            memo[j, used] = min(options)
        return memo[j, used]

    _, queries = best(0, 0)
    pairs = sorted(zip(queries, range(M), strict=True))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([t for _, t in pairs], dtype=torch.long),
    )


def match_transposed_sorted_by_target(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The cost built as (M, Q), one row per object, in numpy float64; the answer listed
    object by object."""
    p = torch.softmax(logits.double(), dim=-1).numpy()
    b, tb = boxes.double().numpy(), target_boxes.double().numpy()
    labels = target_labels.numpy()
    cost = -p[:, labels].T + 5.0 * np.abs(tb[:, None, :] - b[None, :, :]).sum(-1)  # (M, Q)
    targets, queries = linear_sum_assignment(cost)
    return torch.from_numpy(queries).long(), torch.from_numpy(targets).long()


def match_with_weights(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """Weights as optional arguments; the probabilities picked with gather."""
    prob = logits.softmax(-1)
    picked = prob.gather(1, target_labels[None].expand(len(prob), -1))  # (Q, M)
    l1 = torch.stack([(boxes - t).abs().sum(-1) for t in target_boxes], dim=1)  # (Q, M)
    return _solve(class_weight * -picked + box_weight * l1)


CASES = [
    BlindCase(
        CHECK,
        "class_cost_log_prob",
        match_log_prob,
        "mistake",
        "For the class cost I used -log p, the cross-entropy, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "class_cost_raw_logits",
        match_raw_logits,
        "mistake",
        "I took -logits[:, label] as the class cost, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "box_cost_euclidean",
        match_l2_boxes,
        "mistake",
        "torch.cdist with its default p=2, so the box cost is the Euclidean distance.",
    ),
    BlindCase(
        CHECK,
        "weight_5_on_class",
        match_weight_on_class,
        "mistake",
        "I put the factor 5 on the class term instead of the box term.",
    ),
    BlindCase(
        CHECK,
        "class_cost_sign",
        match_plus_prob,
        "mistake",
        "I added +p for the class instead of -p.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "logits.softmax(0): the probabilities normalized over the queries.",
    ),
    BlindCase(
        CHECK,
        "no_object_column_dropped",
        match_no_object_prob,
        "mistake",
        "I took the softmax over the K real classes only, leaving out the no-object column.",
    ),
    BlindCase(
        CHECK,
        "first_m_queries_only",
        match_first_m_queries,
        "mistake",
        "I cut the cost to its first M rows, thinking the assignment needs a square matrix.",
    ),
    BlindCase(
        CHECK,
        "greedy_object_by_object",
        match_per_object_greedy,
        "mistake",
        "Each object in turn takes the cheapest query not yet taken.",
    ),
    BlindCase(
        CHECK,
        "box_cost_mean",
        match_box_mean,
        "mistake",
        "The L1 box cost as the mean of the four differences instead of their sum.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_cost_argmin,
        "mistake",
        "For each object the query of least cost, argmin over dim 0; two objects may share one.",
    ),
    BlindCase(
        CHECK,
        "transposed_cost_returned_as_is",
        match_target_first,
        "mistake",
        "I solved the (M, Q) cost and returned (rows, cols), which are (objects, queries).",
    ),
    BlindCase(
        CHECK,
        "returns_total_cost_too",
        match_cost_only,
        "mistake",
        "I return (total cost, (rows, cols)) to print the cost as well.",
    ),
    BlindCase(
        CHECK,
        "exhaustive_subset_search",
        match_subset_search,
        "correct",
        "No scipy: an exact search over every assignment, with the best cost of the remaining "
        "objects remembered for each set of used queries.",
    ),
    BlindCase(
        CHECK,
        "numpy_transposed_by_target",
        match_transposed_sorted_by_target,
        "correct",
        "The cost as (M, Q) in numpy float64, solved and swapped back; pairs listed by object.",
    ),
    BlindCase(
        CHECK,
        "gather_with_weight_arguments",
        match_with_weights,
        "correct",
        "The class and box weights as optional arguments; the probabilities picked with gather.",
    ),
]
