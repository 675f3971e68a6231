"""Blind set B25, check_hungarian_matching (chapter 19): DETR's one-to-one matching of objects
to queries as readers write it."""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F
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


def match_greedy(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * _box_l1(boxes, target_boxes)  # (Q, M)
    used: set[int] = set()
    queries = []
    for m in range(cost.shape[1]):  # each object takes the best free query
        order = cost[:, m].argsort().tolist()
        q = next(i for i in order if i not in used)
        used.add(q)
        queries.append(q)
    target_index = torch.arange(cost.shape[1])
    query_index = torch.tensor(queries, dtype=torch.long)
    order = query_index.argsort()
    return query_index[order], target_index[order]


def match_maximize(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_swapped(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    query_index, target_index = _solve(cost)
    return target_index, query_index


def match_argmin_per_object(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)  # (Q, M)
    query_index = cost.argmin(dim=0)  # the best query for each object
    return query_index, torch.arange(len(target_labels))


def match_log_prob(logits, boxes, target_labels, target_boxes):
    log_prob = F.log_softmax(logits, dim=-1)  # the same as the classification loss
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_raw_logits(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # distance of boxes
    return _solve(cost)


def match_no_box_weight(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_weight_on_class(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -5 * prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_plus_prob(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_l1_mean(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    l1 = (boxes[:, None] - target_boxes[None]).abs().mean(-1)  # as F.l1_loss
    return _solve(-prob[:, target_labels] + 5 * l1)


def match_no_object_dropped(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # the last class is "no object": not a real class
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


# ---------------------------------------------------------------- correct variants


def match_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * _box_l1(boxes, target_boxes)  # (Q, M)
    Q, M = cost.shape
    best, best_total = None, float("inf")
    for queries in itertools.permutations(range(Q), M):  # query queries[m] takes object m
        total = sum(cost[q, m].item() for m, q in enumerate(queries))
        if total < best_total:
            best, best_total = queries, total
    pairs = sorted((q, m) for m, q in enumerate(best))
    return (
        torch.tensor([q for q, _ in pairs], dtype=torch.long),
        torch.tensor([m for _, m in pairs], dtype=torch.long),
    )


def match_transposed_cost(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """Solved on the (M, Q) cost, then put back in query order; optional weights."""
    prob = torch.softmax(logits.double(), dim=1)
    cost = -class_weight * prob[:, target_labels].T + box_weight * torch.cdist(
        target_boxes.double(), boxes.double(), p=1
    )  # (M, Q)
    objects, queries = linear_sum_assignment(cost.numpy())
    order = queries.argsort()
    return torch.from_numpy(queries[order]).long(), torch.from_numpy(objects[order]).long()


def match_one_hot_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    num_classes = logits.shape[-1]
    onehot = F.one_hot(target_labels, num_classes).to(logits.dtype)  # (M, K + 1)
    class_cost = -torch.einsum("qk,mk->qm", logits.softmax(-1), onehot)
    box_cost = torch.stack(
        [_box_l1(boxes, target_boxes[m : m + 1])[:, 0] for m in range(len(onehot))], 1
    )
    rows, cols = linear_sum_assignment((class_cost + 5.0 * box_cost).numpy())
    return torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "greedy_per_object",
        match_greedy,
        "mistake",
        "Each object in turn takes the free query of least cost, instead of the best total.",
    ),
    BlindCase(
        CHECK,
        "maximize_true",
        match_maximize,
        "mistake",
        "I passed maximize=True to linear_sum_assignment, thinking of the best match as the "
        "largest score.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped,
        "mistake",
        "I returned (target_index, query_index), the two arrays of linear_sum_assignment in "
        "the wrong order.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "cost.argmin(dim=0): every object gets its cheapest query, even if two objects pick "
        "the same one.",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob,
        "mistake",
        "I used -log p for the class cost, as in the loss, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "logits_as_class_cost",
        match_raw_logits,
        "mistake",
        "I took -logits of the object's class, forgetting the softmax.",
    ),
    BlindCase(
        CHECK,
        "euclidean_box_cost",
        match_l2_boxes,
        "mistake",
        "torch.cdist with its default p=2, a Euclidean box distance instead of L1.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        match_no_box_weight,
        "mistake",
        "I added the L1 box cost without its weight 5.",
    ),
    BlindCase(
        CHECK,
        "weight_on_class_cost",
        match_weight_on_class,
        "mistake",
        "I put the 5 on the class cost instead of the box cost.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "softmax(0): I normalised over the queries instead of the classes.",
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
        "l1_mean_over_coordinates",
        match_l1_mean,
        "mistake",
        "My L1 is the mean of the four coordinate differences, as F.l1_loss, not their sum.",
    ),
    BlindCase(
        CHECK,
        "no_object_left_out_of_softmax",
        match_no_object_dropped,
        "mistake",
        "I dropped the no-object column before the softmax, since no object is ever of that class.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Every assignment tried with itertools.permutations; pairs sorted by query.",
    ),
    BlindCase(
        CHECK,
        "transposed_cost_float64",
        match_transposed_cost,
        "correct",
        "Solved on the (M, Q) cost in float64, results put back in query order; the two "
        "weights as optional arguments.",
    ),
    BlindCase(
        CHECK,
        "one_hot_einsum_cost",
        match_one_hot_cost,
        "correct",
        "Class cost as an einsum of the probabilities with one-hot labels, box cost built "
        "column by column.",
    ),
]
