"""Blind set B28, check_hungarian_matching (chapter 19): DETR's one-to-one matching as readers
write it."""

from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The book's cost, (Q, M), shared by the mistakes that are elsewhere."""
    prob = logits.softmax(-1)
    return -prob[:, labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _assign(cost: Tensor, **kwargs) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy(), **kwargs)
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    used: set[int] = set()
    queries = []
    for j in range(cost.shape[1]):  # each object takes the cheapest free query
        order = cost[:, j].argsort().tolist()
        q = next(i for i in order if i not in used)
        used.add(q)
        queries.append(q)
    pairs = sorted(zip(queries, range(cost.shape[1])))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([t for _, t in pairs], dtype=torch.long),
    )


@torch.no_grad()
def match_maximize(logits, boxes, target_labels, target_boxes):
    return _assign(_cost(logits, boxes, target_labels, target_boxes), maximize=True)


@torch.no_grad()
def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    query_index = cost.argmin(dim=0)  # the best query for every object
    return query_index, torch.arange(cost.shape[1])


@torch.no_grad()
def match_swapped(logits, boxes, target_labels, target_boxes):
    rows, cols = _assign(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


@torch.no_grad()
def match_plus_probability(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


@torch.no_grad()
def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


@torch.no_grad()
def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # p=2 by default
    return _assign(cost)


@torch.no_grad()
def match_box_weight_one(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


@torch.no_grad()
def match_mean_abs(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # (Q, M)
    return _assign(-prob[:, target_labels] + 5 * l1)


@torch.no_grad()
def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


@torch.no_grad()
def match_no_object_dropped(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # only the K real classes
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


@torch.no_grad()
def match_labels_as_rows(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost_class = -prob[target_labels].T  # (K + 1, M)?
    cost = cost_class + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def match_subset_dp(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every assignment tried, by dynamic programming over the sets of queries used."""
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)
    c = cost.tolist()
    Q, M = cost.shape
    best: dict[int, tuple[float, list[int]]] = {0: (0.0, [])}
    for j in range(M):  # object j gets one query not used by objects 0 .. j-1
        nxt: dict[int, tuple[float, list[int]]] = {}
        for used, (total, chosen) in best.items():
            for q in range(Q):
                if used >> q & 1:
                    continue
                key = used | 1 << q
                value = total + c[q][j]
                if key not in nxt or value < nxt[key][0]:
                    nxt[key] = (value, chosen + [q])
        best = nxt
    _, chosen = min(best.values(), key=lambda v: v[0])
    pairs = sorted(zip(chosen, range(M)))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([t for _, t in pairs], dtype=torch.long),
    )


@torch.no_grad()
def match_transposed_problem(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The (M, Q) problem solved, then the pairs sorted by query."""
    prob = torch.softmax(logits, dim=1)
    cost_tq = -prob.T[target_labels] + 5 * torch.cdist(target_boxes, boxes, p=1)  # (M, Q)
    targets, queries = linear_sum_assignment(cost_tq.numpy())
    order = np.argsort(queries)
    return torch.from_numpy(queries[order]).long(), torch.from_numpy(targets[order]).long()


@torch.no_grad()
def match_broadcast_cost(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """The cost written with broadcasting and gather; the weights as arguments with defaults."""
    Q, M = logits.shape[0], target_labels.shape[0]
    p = logits.softmax(-1)
    p_obj = p.gather(1, target_labels.view(1, M).expand(Q, M))  # (Q, M)
    l1 = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(-1)  # (Q, M)
    cost = class_weight * -p_obj + box_weight * l1
    rows, cols = linear_sum_assignment(cost.cpu().numpy())
    return torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "Each object in turn takes the cheapest query still free: greedy, not optimal.",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        match_maximize,
        "mistake",
        "I passed maximize=True to linear_sum_assignment.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "cost.argmin(dim=0): the best query for each object, so two objects can share one.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped,
        "mistake",
        "I returned (target_index, query_index), the two arrays in the wrong order.",
    ),
    BlindCase(
        CHECK,
        "plus_probability",
        match_plus_probability,
        "mistake",
        "I added the class probability to the cost instead of subtracting it.",
    ),
    BlindCase(
        CHECK,
        "logits_not_probabilities",
        match_raw_logits,
        "mistake",
        "I used the raw logits of the object's class, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "torch.cdist without p=1, so the box cost is the Euclidean distance, not L1.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_box_weight_one,
        "mistake",
        "I forgot the factor 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "l1_as_mean",
        match_mean_abs,
        "mistake",
        "My L1 distance is the mean of the four absolute differences, not their sum.",
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
        "no_object_class_dropped",
        match_no_object_dropped,
        "mistake",
        "I took the softmax over the K real classes only, leaving out the no-object column.",
    ),
    BlindCase(
        CHECK,
        "labels_index_rows",
        match_labels_as_rows,
        "mistake",
        "I indexed the probabilities as prob[target_labels], which picks rows (queries), not "
        "class columns.",
    ),
    BlindCase(
        CHECK,
        "subset_dynamic_programming",
        match_subset_dp,
        "correct",
        "Every assignment tried by dynamic programming over the sets of used queries; pairs "
        "sorted by query.",
    ),
    BlindCase(
        CHECK,
        "transposed_problem",
        match_transposed_problem,
        "correct",
        "The cost built as (objects, queries), solved, then the pairs sorted by query index.",
    ),
    BlindCase(
        CHECK,
        "broadcast_cost_with_weights",
        match_broadcast_cost,
        "correct",
        "The cost with gather and broadcasting; class_weight and box_weight as extra "
        "arguments with the book's defaults.",
    ),
]
