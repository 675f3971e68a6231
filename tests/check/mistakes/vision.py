"""Mistakes in chapter 19's blocks: the ViT's patch embedding and DETR's Hungarian matching."""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment
from torch import nn

from transformer_tutorial.check.vision import check_hungarian_matching, check_patch_embedding
from transformer_tutorial.vision import PatchEmbedding

from . import Correct, Mistake

# --- the patch embedding: readers' modules ----------------------------------------------------------


class _LinearPatches(nn.Module):
    """The book's layout: ``proj`` a linear layer on each flattened patch; ``order`` is the
    permutation of the axes ``(B, C, h, P, w, P)`` before flattening."""

    order = (0, 2, 4, 1, 3, 5)  # (B, h, w, C, P, P): channel-first inside a patch
    bias = True

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size**2, d_model, bias=self.bias)

    def patches(self, images):
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(*self.order)
        return x.reshape(B, (H // P) * (W // P), C * P * P)

    def forward(self, images):
        return self.proj(self.patches(images))


class PatchesChannelLast(_LinearPatches):
    order = (0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C)


class PatchesSwappedInside(_LinearPatches):
    order = (0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)


class PatchesByColumns(_LinearPatches):
    order = (0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P): the grid read down, then across


class PatchesNoBias(_LinearPatches):
    bias = False


class PatchesBiasNotAdded(_LinearPatches):
    def forward(self, images):
        return self.patches(images) @ self.proj.weight.T


class PatchesStrips(_LinearPatches):
    def forward(self, images):
        B, C, H, W = images.shape
        N = (H // self.patch_size) * (W // self.patch_size)
        return self.proj(images.reshape(B, N, -1))  # no permute: strips, not squares


class _ConvPatches(nn.Module):
    stride_of = staticmethod(lambda P: P)

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        P = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=P, stride=self.stride_of(P))

    def forward(self, images):
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchesOverlapping(_ConvPatches):
    stride_of = staticmethod(lambda P: max(1, P // 2))


class PatchesOverlappingByUnfold(_LinearPatches):
    def forward(self, images):
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=1)  # (B, C*P*P, many): overlapping
        return self.proj(cols.transpose(1, 2))


class PatchesFeatureMap(_ConvPatches):
    def forward(self, images):
        return self.proj(images)  # (B, D, h, w): not flattened into tokens


class PatchesMapReshaped(_ConvPatches):
    def forward(self, images):
        B = images.shape[0]
        out = self.proj(images)  # (B, D, h, w)
        return out.reshape(B, -1, out.shape[1])  # (B, N, D) without moving D last


class PatchesNotTransposed(_ConvPatches):
    def forward(self, images):
        return self.proj(images).flatten(2)  # (B, D, N)


class PatchesByConv(_ConvPatches):
    pass


class PatchesByUnfold(_LinearPatches):
    def forward(self, images):
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N), channel-first
        return self.proj(cols.transpose(1, 2))


class PatchesByLoops(_LinearPatches):
    def forward(self, images):
        P = self.patch_size
        B, C, H, W = images.shape
        tokens = [
            self.proj(images[:, :, y : y + P, x : x + P].reshape(B, -1))
            for y in range(0, H, P)
            for x in range(0, W, P)
        ]
        return torch.stack(tokens, dim=1)  # (B, N, D)


# --- Hungarian matching: readers' functions -----------------------------------------------------------


def _cost(logits, boxes, labels, target_boxes, probs=True, p=1, sign=-1.0, box=5.0, cls=1.0):
    prob = logits.softmax(-1) if probs else logits
    return sign * cls * prob[:, labels] + box * torch.cdist(boxes, target_boxes, p=p)


def _solve(cost, maximize=False):
    rows, cols = linear_sum_assignment(cost.detach().numpy(), maximize=maximize)
    return torch.as_tensor(rows), torch.as_tensor(cols)


def match_maximises(logits, boxes, labels, target_boxes):
    return _solve(_cost(logits, boxes, labels, target_boxes), maximize=True)


def match_greedy_by_object(logits, boxes, labels, target_boxes):
    cost = _cost(logits, boxes, labels, target_boxes)
    rows, taken = [], set()
    for j in range(len(labels)):  # each object in turn takes the cheapest free query
        order = cost[:, j].argsort().tolist()
        q = next(q for q in order if q not in taken)
        taken.add(q)
        rows.append(q)
    return torch.tensor(rows), torch.arange(len(labels))


def match_greedy_cheapest_pair(logits, boxes, labels, target_boxes):
    cost = _cost(logits, boxes, labels, target_boxes).clone()
    pairs = []
    for _ in range(len(labels)):
        q, j = divmod(int(cost.argmin()), cost.shape[1])
        pairs.append((q, j))
        cost[q, :], cost[:, j] = float("inf"), float("inf")
    pairs.sort(key=lambda qj: qj[1])
    return torch.tensor([q for q, _ in pairs]), torch.tensor([j for _, j in pairs])


def match_indices_swapped(logits, boxes, labels, target_boxes):
    rows, cols = _solve(_cost(logits, boxes, labels, target_boxes).T)  # targets x queries
    return rows, cols  # (target_index, query_index): the wrong way round


def match_per_query(logits, boxes, labels, target_boxes):
    cost = _cost(logits, boxes, labels, target_boxes)
    return torch.arange(cost.shape[0]), cost.argmin(1)  # every query picks an object


def match_square_columns_kept(logits, boxes, labels, target_boxes):
    """The cost padded to a square (Q, Q) matrix with 'no object' columns, none dropped."""
    cost = _cost(logits, boxes, labels, target_boxes)
    Q, M = cost.shape
    return _solve(torch.cat([cost, cost.new_zeros(Q, Q - M)], 1))  # pairs with targets >= M


def match_per_object(logits, boxes, labels, target_boxes):
    cost = _cost(logits, boxes, labels, target_boxes)
    return cost.argmin(0), torch.arange(cost.shape[1])  # queries may repeat


def match_fixed_order(logits, boxes, labels, target_boxes):
    return torch.arange(len(labels)), torch.arange(len(labels))


def match_raw_logits(logits, boxes, labels, target_boxes):
    return _solve(_cost(logits, boxes, labels, target_boxes, probs=False))


def match_plus_class(logits, boxes, labels, target_boxes):
    return _solve(_cost(logits, boxes, labels, target_boxes, sign=1.0))


def match_l2_boxes(logits, boxes, labels, target_boxes):
    return _solve(_cost(logits, boxes, labels, target_boxes, p=2))


def match_class_only(logits, boxes, labels, target_boxes):
    return _solve(_cost(logits, boxes, labels, target_boxes, box=0.0))


def match_boxes_only(logits, boxes, labels, target_boxes):
    return _solve(_cost(logits, boxes, labels, target_boxes, cls=0.0))


def match_by_brute_force(logits, boxes, labels, target_boxes):
    cost = _cost(logits, boxes, labels, target_boxes)
    Q, M = cost.shape
    best = min(
        itertools.permutations(range(Q), M),
        key=lambda qs: sum(cost[q, j].item() for j, q in enumerate(qs)),
    )
    return list(best), list(range(M))


def match_transposed_then_swapped_back(logits, boxes, labels, target_boxes):
    cols, rows = _solve(_cost(logits, boxes, labels, target_boxes).T)
    return rows.numpy(), cols.numpy()  # numpy arrays are accepted too


MISTAKES = [
    Mistake(check_patch_embedding, "patch-channel-last", PatchesChannelLast, "channel-last"),
    Mistake(
        check_patch_embedding,
        "patch-swapped-inside",
        PatchesSwappedInside,
        "rows and columns are swapped",
    ),  # fmt: skip
    Mistake(check_patch_embedding, "patch-grid-by-columns", PatchesByColumns, "column by column"),
    Mistake(
        check_patch_embedding, "patch-overlapping-stride", PatchesOverlapping, "the patches overlap"
    ),  # fmt: skip
    Mistake(
        check_patch_embedding,
        "patch-overlapping-unfold",
        PatchesOverlappingByUnfold,
        "your patches overlap",
    ),  # fmt: skip
    Mistake(check_patch_embedding, "patch-no-bias", PatchesNoBias, "no bias"),
    Mistake(
        check_patch_embedding, "patch-bias-not-added", PatchesBiasNotAdded, "bias is not added"
    ),  # fmt: skip
    Mistake(check_patch_embedding, "patch-strips", PatchesStrips, "without a permute"),
    Mistake(check_patch_embedding, "patch-feature-map", PatchesFeatureMap, "feature map"),
    Mistake(check_patch_embedding, "patch-not-transposed", PatchesNotTransposed, "(B, D, N)"),
    Mistake(check_patch_embedding, "patch-map-reshaped", PatchesMapReshaped, "reshaped straight"),
    Mistake(check_hungarian_matching, "match-maximises", match_maximises, "largest total cost"),
    Mistake(
        check_hungarian_matching,
        "match-greedy-by-object",
        match_greedy_by_object,
        "greedy matching",
    ),  # fmt: skip
    Mistake(
        check_hungarian_matching,
        "match-greedy-cheapest-pair",
        match_greedy_cheapest_pair,
        "greedy matching",
    ),  # fmt: skip
    Mistake(
        check_hungarian_matching,
        "match-indices-swapped",
        match_indices_swapped,
        "indices are swapped",
    ),  # fmt: skip
    Mistake(check_hungarian_matching, "match-per-query", match_per_query, "the wrong axis"),
    Mistake(
        check_hungarian_matching,
        "match-square-columns-kept",
        match_square_columns_kept,
        "past the last object",
    ),  # fmt: skip
    Mistake(check_hungarian_matching, "match-per-object", match_per_object, "one-to-one"),
    Mistake(check_hungarian_matching, "match-fixed-order", match_fixed_order, "fixed order"),
    Mistake(check_hungarian_matching, "match-raw-logits", match_raw_logits, "raw logits"),
    Mistake(check_hungarian_matching, "match-plus-class", match_plus_class, "wrong sign"),
    Mistake(check_hungarian_matching, "match-l2-boxes", match_l2_boxes, "(L2)"),
    Mistake(
        check_hungarian_matching, "match-class-only", match_class_only, "box cost is missing"
    ),  # fmt: skip
    Mistake(
        check_hungarian_matching, "match-boxes-only", match_boxes_only, "class cost is missing"
    ),  # fmt: skip
]

CORRECT = [
    Correct(check_patch_embedding, "patch-book", PatchEmbedding),
    Correct(check_patch_embedding, "patch-by-conv2d", PatchesByConv),
    Correct(check_patch_embedding, "patch-by-unfold", PatchesByUnfold),
    Correct(check_patch_embedding, "patch-by-loops", PatchesByLoops),
    Correct(check_hungarian_matching, "match-by-brute-force", match_by_brute_force),
    Correct(
        check_hungarian_matching,
        "match-transposed-then-swapped-back",
        match_transposed_then_swapped_back,
    ),  # fmt: skip
]
