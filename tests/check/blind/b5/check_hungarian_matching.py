"""Blind set B5, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _assign(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


def _l1(boxes: Tensor, target_boxes: Tensor) -> Tensor:
    return (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)  # (Q, M)


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def match_log_prob_cost(logits, boxes, target_labels, target_boxes):
    class_cost = -logits.log_softmax(-1)[:, target_labels]  # the loss's -log p, not -p
    return _assign(class_cost + 5 * _l1(boxes, target_boxes))


@torch.no_grad()
def match_softmax_without_no_object(logits, boxes, target_labels, target_boxes):
    prob = logits[:, :-1].softmax(-1)  # "no object" column dropped before the softmax
    return _assign(-prob[:, target_labels] + 5 * _l1(boxes, target_boxes))


@torch.no_grad()
def match_euclidean_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    box_cost = torch.cdist(boxes, target_boxes)  # p=2 by default: Euclidean, not L1
    return _assign(-prob[:, target_labels] + 5 * box_cost)


@torch.no_grad()
def match_weights_swapped(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    return _assign(-5 * prob[:, target_labels] + 1 * _l1(boxes, target_boxes))


@torch.no_grad()
def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)  # over the queries instead of over the classes
    return _assign(-prob[:, target_labels] + 5 * _l1(boxes, target_boxes))


@torch.no_grad()
def match_combinations(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _l1(boxes, target_boxes)  # (Q, M)
    Q, M = cost.shape
    best, best_cost = None, float("inf")
    for queries in itertools.combinations(range(Q), M):  # subsets, each in one order only
        total = sum(float(cost[q, j]) for j, q in enumerate(queries))
        if total < best_cost:
            best, best_cost = queries, total
    return torch.tensor(best, dtype=torch.long), torch.arange(M)


@torch.no_grad()
def match_mean_abs_box(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    box_cost = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # mean, not sum
    return _assign(-prob[:, target_labels] + 5 * box_cost)


@torch.no_grad()
def match_targets_assumed_in_order(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _l1(boxes, target_boxes)
    rows, _ = linear_sum_assignment(cost.numpy())
    # "the targets come out in order 0 .. M-1", so I paired the rows with arange(M)
    return torch.as_tensor(rows, dtype=torch.long), torch.arange(len(target_labels))


@torch.no_grad()
def match_argmax_class_hit(logits, boxes, target_labels, target_boxes):
    hit = (logits.argmax(-1)[:, None] == target_labels[None, :]).to(boxes.dtype)  # 0/1
    return _assign(-hit + 5 * _l1(boxes, target_boxes))


@torch.no_grad()
def match_returns_numpy(logits, boxes, target_labels, target_boxes):
    cost = -logits.softmax(-1)[:, target_labels] + 5 * _l1(boxes, target_boxes)
    return linear_sum_assignment(cost.numpy())  # scipy's numpy arrays, as they come


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def match_transposed_numpy(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """The cost built in NumPy as (M, Q), one row per object; solved, then turned back into
    (query, object) pairs sorted by query."""
    z = logits.detach().cpu().double().numpy()
    prob = np.exp(z - z.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)  # (Q, K+1)
    labels = target_labels.cpu().numpy()
    b = boxes.detach().cpu().double().numpy()
    tb = target_boxes.detach().cpu().double().numpy()
    cost = -class_weight * prob[:, labels].T + box_weight * np.abs(
        tb[:, None, :] - b[None, :, :]
    ).sum(-1)  # (M, Q)
    objects, queries = linear_sum_assignment(cost)
    order = np.argsort(queries)
    return (
        torch.as_tensor(queries[order], dtype=torch.long),
        torch.as_tensor(objects[order], dtype=torch.long),
    )


@torch.no_grad()
def match_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every injective assignment tried (Q is small); pairs listed object by object."""
    prob = torch.softmax(logits.double(), dim=-1)
    cost = -prob[:, target_labels] + 5.0 * torch.cdist(boxes.double(), target_boxes.double(), p=1)
    Q, M = cost.shape
    best = min(
        itertools.permutations(range(Q), M),
        key=lambda qs: sum(cost[q, j].item() for j, q in enumerate(qs)),
    )
    return torch.tensor(best, dtype=torch.long), torch.arange(M, dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob_cost,
        "mistake",
        "For the class cost I used -log p, as in the training loss, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        match_softmax_without_no_object,
        "mistake",
        "I dropped the 'no object' column before the softmax, so the class probabilities "
        "are renormalised over the K real classes.",
    ),
    BlindCase(
        CHECK,
        "euclidean_box_cost",
        match_euclidean_boxes,
        "mistake",
        "I used torch.cdist with its default p=2, a Euclidean box distance instead of L1.",
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
        "I took the softmax over dim 0, across the queries, instead of over the classes.",
    ),
    BlindCase(
        CHECK,
        "combinations_not_permutations",
        match_combinations,
        "mistake",
        "My brute force loops over itertools.combinations, so each subset of queries is "
        "tried in increasing order only.",
    ),
    BlindCase(
        CHECK,
        "box_cost_mean",
        match_mean_abs_box,
        "mistake",
        "My box cost is the mean of the four absolute differences, not their sum.",
    ),
    BlindCase(
        CHECK,
        "targets_assumed_in_order",
        match_targets_assumed_in_order,
        "mistake",
        "I kept linear_sum_assignment's rows and paired them with arange(M), assuming "
        "the objects come back in order.",
    ),
    BlindCase(
        CHECK,
        "argmax_class_hit",
        match_argmax_class_hit,
        "mistake",
        "My class cost is -1 when the query's argmax class equals the object's class and "
        "0 otherwise, not -p.",
    ),
    BlindCase(
        CHECK,
        "returns_numpy_arrays",
        match_returns_numpy,
        "mistake",
        "I return scipy's pair of NumPy arrays as they are, not long tensors.",
    ),
    BlindCase(
        CHECK,
        "numpy_cost_transposed",
        match_transposed_numpy,
        "correct",
        "The cost built in NumPy with one row per object, solved, and turned back into "
        "(query, object) pairs sorted by query; weights as optional arguments.",
    ),
    BlindCase(
        CHECK,
        "brute_force_permutations",
        match_brute_force,
        "correct",
        "Every injective assignment tried with itertools.permutations, in float64; the "
        "pairs listed object by object.",
    ),
]
