"""Blind set B29, check_hungarian_matching (chapter 19): DETR's one-to-one matching as readers
write it."""

from __future__ import annotations

import itertools

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The right (Q, M) cost, for the mistakes whose slip is elsewhere."""
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _solve(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes).clone()
    queries, targets = [], []
    for _ in range(len(target_labels)):  # take the cheapest pair, then strike its row and column
        q, t = divmod(int(cost.argmin()), cost.shape[1])
        queries.append(q)
        targets.append(t)
        cost[q, :] = float("inf")
        cost[:, t] = float("inf")
    order = sorted(range(len(queries)), key=lambda i: queries[i])
    return torch.tensor([queries[i] for i in order]), torch.tensor([targets[i] for i in order])


def match_maximize(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=True)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_argmin_per_query(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return torch.arange(cost.shape[0]), cost.argmin(dim=1)  # each query's best object


def match_argmin_per_object(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = _cost(logits, boxes, target_labels, target_boxes)
    return cost.argmin(dim=0), torch.arange(cost.shape[1])  # each object's best query


def match_swapped(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    rows, cols = _solve(_cost(logits, boxes, target_labels, target_boxes))
    return cols, rows


def match_log_prob(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    log_p = logits.log_softmax(-1)  # the loss uses log-probabilities, so the cost should too
    cost = -log_p[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_class_sign(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_l2_boxes(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # cdist's default
    return _solve(cost)


def match_no_box_weight(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_softmax_over_queries(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_no_object_dropped(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits[:, :-1].softmax(-1)  # "no object" is never a target class
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_mean_l1(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    prob = logits.softmax(-1)
    l1 = (boxes[:, None, :] - target_boxes[None, :, :]).abs().mean(-1)  # like F.l1_loss
    return _solve(-prob[:, target_labels] + 5 * l1)


def match_raw_logits(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _solve(cost)


def match_boxes_only(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    cost = 5 * torch.cdist(boxes, target_boxes, p=1)  # where the boxes are decides the match
    return _solve(cost)


# ---------------------------------------------------------------- correct variants


def match_brute_force(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """Every assignment of the M objects to distinct queries; the result ordered by object."""
    cost = _cost(logits, boxes, target_labels, target_boxes).tolist()
    Q, M = len(cost), len(target_labels)
    best, best_perm = float("inf"), ()
    for perm in itertools.permutations(range(Q), M):
        total = sum(cost[q][j] for j, q in enumerate(perm))
        if total < best:
            best, best_perm = total, perm
    return torch.tensor(best_perm, dtype=torch.long), torch.arange(M)


def match_transposed_scipy(
    logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor
) -> tuple[Tensor, Tensor]:
    """scipy on the (M, Q) cost, the two index arrays swapped back; box cost by broadcasting."""
    prob = torch.softmax(logits.double(), dim=-1)
    class_cost = -prob.index_select(1, target_labels)  # (Q, M)
    box_cost = (boxes.double()[:, None] - target_boxes.double()[None]).abs().sum(-1)
    cost = (class_cost + 5.0 * box_cost).T.detach().numpy()  # (M, Q)
    objects, queries = linear_sum_assignment(cost)
    return torch.from_numpy(queries).long(), torch.from_numpy(objects).long()


def match_einsum_onehot(
    logits: Tensor,
    boxes: Tensor,
    target_labels: Tensor,
    target_boxes: Tensor,
    class_weight: float = 1.0,
    box_weight: float = 5.0,
) -> tuple[Tensor, Tensor]:
    """The class cost as probabilities times a one-hot of the labels; weights as arguments."""
    with torch.no_grad():
        onehot = torch.nn.functional.one_hot(target_labels, logits.shape[-1]).to(logits.dtype)
        p_label = torch.einsum("qk,mk->qm", logits.softmax(-1), onehot)
        l1 = torch.cdist(boxes, target_boxes, p=1)
        rows, cols = linear_sum_assignment((box_weight * l1 - class_weight * p_label).numpy())
    return torch.tensor(rows), torch.tensor(cols)


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "I matched greedily: the cheapest pair first, then the cheapest of what is left.",
    ),
    BlindCase(
        CHECK,
        "maximize",
        match_maximize,
        "mistake",
        "I passed maximize=True to linear_sum_assignment, thinking of matching scores.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_query",
        match_argmin_per_query,
        "mistake",
        "Each query takes its cheapest object: Q pairs, objects used several times.",
    ),
    BlindCase(
        CHECK,
        "argmin_per_object",
        match_argmin_per_object,
        "mistake",
        "Each object takes its cheapest query, so two objects can share a query.",
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
        "log_probability_cost",
        match_log_prob,
        "mistake",
        "My class cost is -log p, as in the loss, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "class_cost_sign",
        match_class_sign,
        "mistake",
        "I added +p of the object's class to the cost instead of -p.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "I used torch.cdist with its default p=2, a Euclidean distance instead of L1.",
    ),
    BlindCase(
        CHECK,
        "box_weight_forgotten",
        match_no_box_weight,
        "mistake",
        "I forgot the factor 5 on the L1 box cost.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took the softmax over dim 0, the queries, instead of over the classes.",
    ),
    BlindCase(
        CHECK,
        "no_object_column_dropped",
        match_no_object_dropped,
        "mistake",
        "I dropped the 'no object' logit before the softmax, so the probabilities are over the "
        "K real classes only.",
    ),
    BlindCase(
        CHECK,
        "l1_mean_not_sum",
        match_mean_l1,
        "mistake",
        "My L1 distance is the mean of the four coordinate differences, as F.l1_loss gives, "
        "not their sum.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_cost",
        match_raw_logits,
        "mistake",
        "I used -logit of the object's class in the cost and forgot the softmax.",
    ),
    BlindCase(
        CHECK,
        "class_cost_forgotten",
        match_boxes_only,
        "mistake",
        "My cost is the weighted L1 box distance alone; I forgot the class term.",
    ),
    BlindCase(
        CHECK,
        "brute_force",
        match_brute_force,
        "correct",
        "Every assignment tried with itertools.permutations; pairs come ordered by object.",
    ),
    BlindCase(
        CHECK,
        "transposed_scipy",
        match_transposed_scipy,
        "correct",
        "scipy on the (M, Q) cost in float64, the index arrays swapped back; L1 by broadcasting.",
    ),
    BlindCase(
        CHECK,
        "onehot_einsum_weights",
        match_einsum_onehot,
        "correct",
        "The class probability via einsum with a one-hot of the labels; class and box weights as "
        "extra arguments with defaults.",
    ),
]
