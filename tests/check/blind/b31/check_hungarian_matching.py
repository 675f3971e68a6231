"""Blind set B31, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, labels: Tensor, target_boxes: Tensor) -> Tensor:
    prob = logits.softmax(-1)
    return -prob[:, labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _solve(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Each object in turn takes the cheapest query still free."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used: set[int] = set()
    pairs = []
    for j in range(cost.shape[1]):
        for q in cost[:, j].argsort().tolist():
            if q not in used:
                used.add(q)
                pairs.append((q, j))
                break
    pairs.sort()
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([j for _, j in pairs], dtype=torch.long),
    )


def match_largest_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(
        _cost(logits, boxes, target_labels, target_boxes).numpy(), maximize=True
    )
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_argmin_per_query(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every query takes its cheapest object: Q matches, objects reused."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return torch.arange(cost.shape[0]), cost.argmin(dim=1)


def match_argmin_per_object(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every object takes its cheapest query, even if another object took it too."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return cost.argmin(dim=0), torch.arange(cost.shape[1])


def match_swapped(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    rows, cols = _solve(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


def match_transposed_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The cost built as (M, Q), objects as rows, and the result read as (query, object)."""
    cost = _cost(logits, boxes, target_labels, target_boxes).T  # (M, Q)
    return _solve(cost)


def match_logits_as_class_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_log_prob_class_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """-log p, as in the training loss, instead of -p."""
    cost = -logits.log_softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_l2_box_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)
    return _solve(cost)


def match_weights_swapped(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -5 * logits.softmax(-1)[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_softmax_over_queries(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.softmax(0)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_softmax_without_no_object(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The softmax taken over the K real classes only, leaving out 'no object'."""
    prob = logits[:, :-1].softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_plus_class_prob(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_mean_abs_box(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The box cost as a mean absolute error (F.l1_loss's default), not the L1 sum."""
    box = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)
    cost = -logits.softmax(-1)[:, target_labels] + 5 * box
    return _solve(cost)


def match_predicted_class_prob(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The class term uses each query's most likely class, whatever the object's class."""
    prob = logits.softmax(-1).max(-1).values[:, None]  # (Q, 1)
    cost = -prob + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


# ---------------------------------------------------------------- correct variants


def match_brute_force_by_object(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every assignment tried, as the chapter's check does; pairs listed in object order."""
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best = min(
        itertools.permutations(range(Q), M),
        key=lambda qs: sum(cost[q, j].item() for j, q in enumerate(qs)),
    )
    return torch.tensor(best, dtype=torch.long), torch.arange(M)


def match_brute_force_sorted(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Brute force over the permutations, with the pairs sorted by query as scipy gives them."""
    cost = _cost(logits, boxes, target_labels, target_boxes).double()
    Q, M = cost.shape
    best_total, best = float("inf"), None
    for qs in itertools.permutations(range(Q), M):
        total = cost[list(qs), list(range(M))].sum().item()
        if total < best_total:
            best_total, best = total, qs
    pairs = sorted(zip(best, range(M)))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([j for _, j in pairs], dtype=torch.long),
    )


def match_numpy_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The cost computed in NumPy float64 with broadcasting, then linear_sum_assignment."""
    z = logits.detach().double().numpy()
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    b = boxes.detach().double().numpy()
    t = target_boxes.detach().double().numpy()
    l1 = np.abs(b[:, None, :] - t[None, :, :]).sum(-1)
    cost = -p[:, target_labels.numpy()] + 5.0 * l1
    rows, cols = linear_sum_assignment(cost)
    return torch.from_numpy(rows).long(), torch.from_numpy(cols).long()


def match_transposed_and_back(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """Solved on the (M, Q) cost, indices swapped back and sorted by query; optional weights."""
    prob = logits.softmax(-1)
    cost = class_weight * -prob[:, target_labels] + box_weight * torch.cdist(
        boxes, target_boxes, p=1
    )
    obj, qry = linear_sum_assignment(cost.T.numpy())
    order = np.argsort(qry)
    return torch.as_tensor(qry[order], dtype=torch.long), torch.as_tensor(obj[order])


CASES = [
    BlindCase(
        CHECK,
        "greedy_matching",
        match_greedy,
        "mistake",
        "Each object in turn took the cheapest query still free (greedy, not optimal).",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        match_largest_cost,
        "mistake",
        "linear_sum_assignment(..., maximize=True): the most expensive assignment.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        match_argmin_per_query,
        "mistake",
        "Each query takes the object of least cost: Q pairs, objects used several times.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "Each object takes its cheapest query, even one already taken by another object.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped,
        "mistake",
        "I returned (target_index, query_index), the wrong way round.",
    ),
    BlindCase(
        CHECK,
        "cost_transposed",
        match_transposed_cost,
        "mistake",
        "I built the cost as (M, Q) and returned scipy's rows as query indices.",
    ),
    BlindCase(
        CHECK,
        "logits_as_class_cost",
        match_logits_as_class_cost,
        "mistake",
        "I used -logits of the object's class, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob_class_cost,
        "mistake",
        "I used -log p (the cross-entropy) as the class cost instead of -p.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        match_l2_box_cost,
        "mistake",
        "torch.cdist with its default p=2: a Euclidean box distance, not L1.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        match_weights_swapped,
        "mistake",
        "I put the weight 5 on the class term and 1 on the box term.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "softmax(0): the probabilities normalized over the queries, not the classes.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        match_softmax_without_no_object,
        "mistake",
        "I dropped the 'no object' logit before the softmax.",
    ),
    BlindCase(
        CHECK,
        "plus_class_probability",
        match_plus_class_prob,
        "mistake",
        "I added p instead of subtracting it, so likely classes cost more.",
    ),
    BlindCase(
        CHECK,
        "mean_abs_box_cost",
        match_mean_abs_box,
        "mistake",
        "The box cost as the mean of |b - b'| over the 4 coordinates, not their sum.",
    ),
    BlindCase(
        CHECK,
        "predicted_class_probability",
        match_predicted_class_prob,
        "mistake",
        "The class term took each query's highest probability, not that of the object's class.",
    ),
    BlindCase(
        CHECK,
        "brute_force_object_order",
        match_brute_force_by_object,
        "correct",
        "Every permutation tried as in the chapter; pairs listed in object order.",
    ),
    BlindCase(
        CHECK,
        "brute_force_sorted_by_query",
        match_brute_force_sorted,
        "correct",
        "Brute force over the permutations in float64, pairs sorted by query index.",
    ),
    BlindCase(
        CHECK,
        "numpy_cost",
        match_numpy_cost,
        "correct",
        "The cost in NumPy float64 with broadcasting, then linear_sum_assignment.",
    ),
    BlindCase(
        CHECK,
        "transposed_then_swapped_back",
        match_transposed_and_back,
        "correct",
        "Solved on cost.T, indices swapped back and sorted by query; optional weights.",
    ),
]
