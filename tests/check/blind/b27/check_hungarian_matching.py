"""Blind set B27, check_hungarian_matching (chapter 19): DETR's matching as readers write it."""

from __future__ import annotations

import itertools

import numpy as np
import torch
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from .. import BlindCase

CHECK = "check_hungarian_matching"


def _cost(logits: Tensor, boxes: Tensor, target_labels: Tensor, target_boxes: Tensor) -> Tensor:
    """The right cost, shared by the mistakes that are elsewhere."""
    prob = logits.softmax(-1)
    return -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)


def _lsa(cost: Tensor) -> tuple[Tensor, Tensor]:
    rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
    return torch.as_tensor(rows, dtype=torch.long), torch.as_tensor(cols, dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def match_greedy(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)  # (Q, M)
    taken, queries = set(), []
    for j in range(cost.shape[1]):  # each object takes the cheapest query still free
        order = cost[:, j].argsort().tolist()
        q = next(q for q in order if q not in taken)
        taken.add(q)
        queries.append(q)
    return torch.tensor(queries), torch.arange(cost.shape[1])


def match_largest_cost(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=True)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_per_query(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    best_object = cost.argmin(dim=1)  # each query's cheapest object
    return torch.arange(cost.shape[0]), best_object


def match_swapped(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    rows, cols = _lsa(cost)
    return cols, rows  # (object, query) pairs


def match_logits_not_probs(logits, boxes, target_labels, target_boxes):
    cost = -logits[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _lsa(cost)


def match_l2_boxes(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes)  # distance of boxes
    return _lsa(cost)


def match_box_weight_one(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels] + torch.cdist(boxes, target_boxes, p=1)
    return _lsa(cost)


def match_class_sign(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    cost = prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _lsa(cost)


def match_log_prob_cost(logits, boxes, target_labels, target_boxes):
    log_prob = logits.log_softmax(-1)  # as in the cross-entropy of the loss
    cost = -log_prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _lsa(cost)


def match_softmax_over_queries(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(0)
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _lsa(cost)


def match_l1_loss_mean(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    Q, M = boxes.shape[0], target_boxes.shape[0]
    pairs_q = boxes[:, None].expand(Q, M, 4)
    pairs_t = target_boxes[None].expand(Q, M, 4)
    l1 = F.l1_loss(pairs_q, pairs_t, reduction="none").mean(-1)
    return _lsa(-prob[:, target_labels] + 5 * l1)


def match_label_shift(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    # class 0 is "no object", so object class c is column c + 1
    cost = -prob[:, target_labels + 1] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _lsa(cost)


def match_sigmoid(logits, boxes, target_labels, target_boxes):
    prob = logits.sigmoid()
    cost = -prob[:, target_labels] + 5 * torch.cdist(boxes, target_boxes, p=1)
    return _lsa(cost)


def match_combinations(logits, boxes, target_labels, target_boxes):
    cost = _cost(logits, boxes, target_labels, target_boxes)
    Q, M = cost.shape
    best, best_total = None, float("inf")
    for queries in itertools.combinations(range(Q), M):  # every choice of M queries
        total = sum(cost[q, j].item() for j, q in enumerate(queries))
        if total < best_total:
            best, best_total = queries, total
    return torch.tensor(best), torch.arange(M)


def match_pairs_tensor(logits, boxes, target_labels, target_boxes):
    rows, cols = _lsa(_cost(logits, boxes, target_labels, target_boxes))
    return torch.stack([rows, cols], dim=1)  # (M, 2): one (query, object) pair per row


def match_box_cost_broadcast(logits, boxes, target_labels, target_boxes):
    prob = logits.softmax(-1)
    box_cost = (boxes[None, :, :] - target_boxes[:, None, :]).abs().sum(-1)  # (M, Q)
    cost = -prob[:, target_labels] + 5 * box_cost.reshape(boxes.shape[0], -1)
    return _lsa(cost)


# ---------------------------------------------------------------- correct variants


def match_brute_force(logits, boxes, target_labels, target_boxes):
    """Every injective assignment tried (Q is small); pairs listed in object order."""
    prob = torch.softmax(logits, dim=-1)
    cost = -prob[:, target_labels] + 5.0 * (boxes[:, None, :] - target_boxes[None]).abs().sum(-1)
    Q, M = cost.shape
    best = min(
        itertools.permutations(range(Q), M),
        key=lambda qs: sum(cost[q, j].item() for j, q in enumerate(qs)),
    )
    return torch.tensor(best, dtype=torch.long), torch.arange(M, dtype=torch.long)


def match_transposed(logits, boxes, target_labels, target_boxes):
    """linear_sum_assignment on the (M, Q) matrix, turned back and sorted by query."""
    prob = logits.softmax(-1)
    cost = -prob[:, target_labels].T + 5 * torch.cdist(target_boxes, boxes, p=1)  # (M, Q)
    objects, queries = linear_sum_assignment(cost.detach().numpy())
    order = np.argsort(queries)
    return torch.from_numpy(queries[order]).long(), torch.from_numpy(objects[order]).long()


def match_numpy(logits, boxes, target_labels, target_boxes, class_weight=1.0, box_weight=5.0):
    """The cost in NumPy float64; weights as extra arguments with the book's values."""
    lg = logits.detach().double().cpu().numpy()
    p = np.exp(lg - lg.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    b = boxes.detach().double().cpu().numpy()
    t = target_boxes.detach().double().cpu().numpy()
    labels = target_labels.cpu().numpy()
    cost = -class_weight * p[:, labels] + box_weight * np.abs(b[:, None] - t[None]).sum(-1)
    q, o = linear_sum_assignment(cost)
    return torch.as_tensor(q, dtype=torch.long), torch.as_tensor(o, dtype=torch.long)


def match_square_padding(logits, boxes, target_labels, target_boxes):
    """The (Q, M) cost padded with zero columns to (Q, Q); the dummy objects dropped."""
    Q, M = logits.shape[0], len(target_labels)
    cost = torch.zeros(Q, Q, dtype=torch.float64)
    prob = logits.double().softmax(-1)
    l1 = (boxes.double()[:, None] - target_boxes.double()[None]).abs().sum(-1)
    cost[:, :M] = -prob[:, target_labels] + 5 * l1
    rows, cols = linear_sum_assignment(cost.detach().numpy())
    real = cols < M
    return torch.as_tensor(rows[real]), torch.as_tensor(cols[real])


CASES = [
    BlindCase(
        CHECK,
        "greedy",
        match_greedy,
        "mistake",
        "Object by object, I give each the cheapest query not yet taken.",
    ),
    BlindCase(
        CHECK,
        "largest_cost",
        match_largest_cost,
        "mistake",
        "I passed maximize=True to linear_sum_assignment.",
    ),
    BlindCase(
        CHECK,
        "one_match_per_query",
        match_per_query,
        "mistake",
        "Every query gets its cheapest object with argmin over the objects.",
    ),
    BlindCase(
        CHECK,
        "indices_swapped",
        match_swapped,
        "mistake",
        "I return (target_index, query_index), the two arrays of linear_sum_assignment in the "
        "other order.",
    ),
    BlindCase(
        CHECK,
        "logits_not_probabilities",
        match_logits_not_probs,
        "mistake",
        "The class cost takes the logits directly, without the softmax.",
    ),
    BlindCase(
        CHECK,
        "l2_box_distance",
        match_l2_boxes,
        "mistake",
        "I used torch.cdist with its default p=2, the Euclidean distance of the boxes.",
    ),
    BlindCase(
        CHECK,
        "box_weight_one",
        match_box_weight_one,
        "mistake",
        "I left out the factor 5 on the box cost.",
    ),
    BlindCase(
        CHECK,
        "class_cost_sign",
        match_class_sign,
        "mistake",
        "I added the probability of the object's class instead of subtracting it.",
    ),
    BlindCase(
        CHECK,
        "log_prob_class_cost",
        match_log_prob_cost,
        "mistake",
        "My class cost is -log p, as in the cross-entropy, instead of -p.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        match_softmax_over_queries,
        "mistake",
        "I took softmax(0), over the queries, instead of over the classes.",
    ),
    BlindCase(
        CHECK,
        "l1_loss_mean",
        match_l1_loss_mean,
        "mistake",
        "The box cost is F.l1_loss(reduction='none') averaged over the 4 coordinates instead of "
        "summed.",
    ),
    BlindCase(
        CHECK,
        "label_shifted",
        match_label_shift,
        "mistake",
        "I read the object's class in column label + 1, thinking column 0 is 'no object'.",
    ),
    BlindCase(
        CHECK,
        "sigmoid_probabilities",
        match_sigmoid,
        "mistake",
        "I turned the logits into probabilities with a sigmoid.",
    ),
    BlindCase(
        CHECK,
        "brute_force_combinations",
        match_combinations,
        "mistake",
        "My brute force runs over itertools.combinations, so the queries of an assignment are "
        "always in increasing order.",
    ),
    BlindCase(
        CHECK,
        "pairs_tensor",
        match_pairs_tensor,
        "mistake",
        "I return one (M, 2) tensor of (query, object) pairs.",
    ),
    BlindCase(
        CHECK,
        "box_cost_transposed",
        match_box_cost_broadcast,
        "mistake",
        "I built the box cost as an (M, Q) matrix and reshaped it to (Q, M).",
    ),
    BlindCase(
        CHECK,
        "brute_force_permutations",
        match_brute_force,
        "correct",
        "Every injective assignment with itertools.permutations; the pairs in the objects' order.",
    ),
    BlindCase(
        CHECK,
        "transposed_then_sorted",
        match_transposed,
        "correct",
        "linear_sum_assignment on the (M, Q) matrix, the result turned back and sorted by query.",
    ),
    BlindCase(
        CHECK,
        "numpy_cost",
        match_numpy,
        "correct",
        "The cost in NumPy float64; the two weights as extra arguments with the book's values.",
    ),
    BlindCase(
        CHECK,
        "square_padding",
        match_square_padding,
        "correct",
        "The cost padded with zero columns to a square matrix, the dummy objects dropped.",
    ),
]
