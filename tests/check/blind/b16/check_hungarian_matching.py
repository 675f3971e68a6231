"""Blind set B16, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _assign(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def hm_greedy(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    used: set[int] = set()
    queries = []
    for j in range(len(target_labels)):  # each object takes its cheapest free query
        order = cost[:, j].argsort().tolist()
        q = next(i for i in order if i not in used)
        used.add(q)
        queries.append(q)
    return torch.tensor(queries), torch.arange(len(target_labels))


def hm_maximize(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=True)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def hm_argmin_per_query(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    best = cost.argmin(dim=1)  # each query's cheapest object
    return torch.arange(len(logits)), best


def hm_swapped(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    queries, targets = _assign(cost.T)  # (M, Q): one row per object
    return queries, targets  # but the rows of cost.T are the objects


def hm_raw_logits(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def hm_log_probs(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.log_softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)  # the cross-entropy as the class cost


def hm_l2_boxes(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.softmax(-1)[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)
    return _assign(cost)


def hm_no_box_weight(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits.softmax(-1)[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def hm_plus_probability(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def hm_softmax_over_queries(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def hm_softmax_without_no_object(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits[:, :-1].softmax(-1)  # the K real classes only
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _assign(cost)


def hm_mean_l1(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # (Q, M)
    cost = -logits.softmax(-1)[:, target_labels] + 5 * l1
    return _assign(cost)


# ---------------------------------------------------------------- correct variants


def hm_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every assignment tried; the pairs come out in the objects' order."""
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().sum(-1)
    cost = (-prob[:, target_labels] + 5.0 * l1).tolist()
    M = len(target_labels)
    best, best_cost = None, float("inf")
    for queries in itertools.permutations(range(len(cost)), M):
        total = sum(cost[q][j] for j, q in enumerate(queries))
        if total < best_cost:
            best, best_cost = queries, total
    return torch.tensor(best, dtype=torch.long), torch.arange(M)


def hm_transposed_and_sorted(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """The (M, Q) cost assigned, then the pairs turned round and sorted by query."""
    prob = torch.softmax(logits.double(), dim=-1)
    cost_class = -prob.T[target_labels]  # (M, Q)
    cost_box = torch.cdist(target_boxes.double(), boxes.double(), p=1)  # (M, Q)
    cost = (class_weight * cost_class + box_weight * cost_box).detach()
    targets, queries = linear_sum_assignment(cost.cpu().numpy())
    order = queries.argsort()
    return torch.from_numpy(queries[order]).long(), torch.from_numpy(targets[order]).long()


def hm_gather_cost(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """The class cost with gather, the L1 as a sum of broadcast differences, scipy on numpy."""
    Q, M = logits.shape[0], target_labels.shape[0]
    with torch.no_grad():
        prob = logits.softmax(dim=1)
        cost_class = -prob.gather(1, target_labels.expand(Q, M))
        cost_box = (boxes.unsqueeze(1) - target_boxes.unsqueeze(0)).abs().sum(dim=2)
        rows, cols = linear_sum_assignment((cost_class + 5 * cost_box).cpu().numpy())
    return torch.tensor(rows), torch.tensor(cols)


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        hm_greedy,
        "mistake",
        "Each object in turn takes its cheapest query that is still free.",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        hm_maximize,
        "mistake",
        "I called linear_sum_assignment with maximize=True, thinking of a matching score.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        hm_argmin_per_query,
        "mistake",
        "Every query takes its cheapest object (argmin over the objects), Q pairs, not M.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        hm_swapped,
        "mistake",
        "I ran the assignment on cost.T and returned its (rows, cols) as (query, target), which "
        "are (target, query).",
    ),
    BlindCase(
        CHECK,
        "raw_logits_class_cost",
        hm_raw_logits,
        "mistake",
        "The class cost is minus the logit, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "log_probability_class_cost",
        hm_log_probs,
        "mistake",
        "I used -log p (the cross-entropy) as the class cost instead of -p.",
    ),
    BlindCase(
        CHECK,
        "l2_box_cost",
        hm_l2_boxes,
        "mistake",
        "torch.cdist's default p=2: a Euclidean box distance instead of L1.",
    ),
    BlindCase(
        CHECK,
        "box_weight_missing",
        hm_no_box_weight,
        "mistake",
        "I forgot the factor 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "class_cost_plus_p",
        hm_plus_probability,
        "mistake",
        "I added the probability of the object's class instead of subtracting it.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        hm_softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0, the queries.",
    ),
    BlindCase(
        CHECK,
        "softmax_without_no_object",
        hm_softmax_without_no_object,
        "mistake",
        "I took the softmax over the K real classes only, leaving out the no-object logit.",
    ),
    BlindCase(
        CHECK,
        "mean_l1",
        hm_mean_l1,
        "mistake",
        "My L1 distance is the mean of the four coordinates' differences, not their sum.",
    ),
    BlindCase(
        CHECK,
        "brute_force_permutations",
        hm_brute_force,
        "correct",
        "Every assignment tried with itertools.permutations; the pairs come out in the "
        "objects' order.",
    ),
    BlindCase(
        CHECK,
        "transposed_cost_sorted_by_query",
        hm_transposed_and_sorted,
        "correct",
        "The cost built as (M, Q) in float64, the assignment's pairs turned round and sorted "
        "by query; the two weights as extra arguments.",
    ),
    BlindCase(
        CHECK,
        "gather_and_broadcast",
        hm_gather_cost,
        "correct",
        "The class cost by gather, the L1 by broadcasting, scipy on the numpy cost.",
    ),
]
