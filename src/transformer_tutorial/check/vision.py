"""Vision checks: the ViT's patch embedding and DETR's Hungarian matching (chapter 19)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import torch
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment
from torch import Tensor, nn

from ..vision import hungarian_match, matching_cost
from .engine import check
from .tensors import close, expect_tensor, randn
from .verdict import Verdict, Wrong, say

# --- the patch embedding ---------------------------------------------------------------------------

MISTAKES = {
    "patch-overlapping-stride": "the convolution's stride is {stride} for patches of {P}x{P}: "
    "with a stride smaller than the patch the patches overlap (larger: pixels are skipped). Use "
    "stride = kernel_size = P.",
    "patch-no-bias": "`proj` has no bias: a patch embedding is W x + b, as nn.Conv2d's.",
    "patch-feature-map": "the output is the convolution's feature map {shape} = (B, D, h, w); "
    "flatten it into tokens: .flatten(2).transpose(1, 2) -> (B, N, D).",
    "patch-not-transposed": "the output is {shape} = (B, D, N): the tokens are on the last axis; "
    "transpose to (B, N, D) -- one row per patch.",
    "patch-extra-token": "{tokens} tokens for a {H}x{W} image in {P}x{P} patches, which give "
    "N = {N}: one token too many. The patch embedding returns the N patch tokens only; a [CLS] "
    "token, if the model has one, is prepended by the model after it.",
    "patch-overlapping-unfold": "{tokens} tokens for a {H}x{W} image in {P}x{P} patches, which "
    "give N = {N}: your patches overlap. Step by P pixels (stride = patch size).",
    "patch-map-reshaped": "the feature map (B, D, h, w) = {shape} is reshaped straight to (B, N, "
    "D), which mixes the D features of one patch with the positions of others: flatten it and "
    "move D last, .flatten(2).transpose(1, 2).",
    "patch-bias-not-added": "the bias is not added: z = W x + b (use proj(...) rather than its "
    "weight alone).",
    "patch-grid-by-columns": "the patches come column by column (the {h}x{w} grid read down, then "
    "across); the book's order is row-major, left to right then top to bottom, as "
    "Conv2d(...).flatten(2) gives.",
    "patch-channel-last": "each patch is flattened channel-last (row, column, channel); flatten it "
    "channel-first (C, then the P rows, then the P columns), the layout of Conv2d's kernel (D, C, "
    "P, P), so that a convolution's weights load unchanged: permute the image to (B, h, w, C, P, "
    "P) before the reshape.",
    "patch-swapped-inside": "inside each patch, rows and columns are swapped: a patch's values go "
    "row by row (its P rows, each of P columns), as the image is stored.",
    "patch-scaled": "your tokens are the patch embeddings times sqrt(D) = {root:.4g}: that "
    "scaling belongs to the token embedding of a text Transformer (chapter 13), not to the patch "
    "projection, which is W x + b alone.",
    "patch-activation": "your tokens pass through a {act} after the projection: the patch "
    "embedding is the linear map W x + b alone; the nonlinearities are in the blocks' MLPs.",
    "patch-normalised": "your patches are layer-normalised ({where} the projection): the patch "
    "embedding is W x + b alone, and the ViT's blocks normalise where they need to.",
    "patch-strips": "the image is reshaped to (B, N, C·P·P) without a permute: each 'patch' is "
    "then a run of consecutive values in memory (strips of rows), not a PxP square. Reshape to "
    "(B, C, h, P, w, P) and permute first.",
}

MESSAGES = {
    "patch-linear-size": "`proj` maps {inputs} -> {outputs} features; a patch of C = {C} channels "
    "and P = {P} holds C·P·P = {values} values, mapped to D = {D}.",
    "patch-conv-size": "`proj` should be nn.Conv2d({C}, {D}, kernel_size={P}, stride={P}), got "
    "kernel {kernel}, {inputs} -> {outputs} channels.",
    "patch-no-proj": "the module needs a layer `proj`, as in the book: nn.Linear(C·P·P, D) applied "
    "to each flattened patch, or nn.Conv2d(C, D, kernel_size=P, stride=P).",
    "patch-not-a-tensor": "the output should be a tensor (B, N, D), got {kind}.",
    "patch-output": "the output for a {H}x{W} image and P = {P}",
    "patch-differs": "for a {H}x{W} image and P = {P} the output differs from "
    "nn.Conv2d(kernel_size={P}, stride={P}) with your weights (largest difference "
    "{diff:.3g}).",
    "before": "before",
    "after": "after",
    "patch-reads": "{message} Your token 0 reads the pixels of channels {channels}, rows {rows}, "
    "columns {columns}; the book's token 0 is the top-left {P}x{P} square (rows 0-{last}, "
    "columns 0-{last}) of all {C} channels.",
}


def _patch_weights(mine: nn.Module, C: int, P: int, D: int) -> tuple[Tensor, Tensor | None, bool]:
    """The reader's ``proj`` as a convolution kernel ``(D, C, P, P)`` (a linear layer's weight
    read channel-first), its bias, and whether ``proj`` is a linear layer."""
    proj = getattr(mine, "proj", None)
    if isinstance(proj, nn.Linear):
        if (proj.in_features, proj.out_features) != (C * P * P, D):
            raise Wrong.differs(MESSAGES, "patch-linear-size", C=C, P=P, values=C * P * P, D=D,
                                inputs=proj.in_features, outputs=proj.out_features)  # fmt: skip
        return proj.weight.detach().view(D, C, P, P), proj.bias, True
    if isinstance(proj, nn.Conv2d):
        if proj.stride != (P, P):
            raise Wrong.named(MISTAKES, "patch-overlapping-stride", stride=proj.stride, P=P)
        if proj.kernel_size != (P, P) or (proj.in_channels, proj.out_channels) != (C, D):
            raise Wrong.differs(MESSAGES, "patch-conv-size", C=C, D=D, P=P, kernel=proj.kernel_size,
                                inputs=proj.in_channels, outputs=proj.out_channels)  # fmt: skip
        return proj.weight.detach(), proj.bias, False
    raise Wrong.differs(MESSAGES, "patch-no-proj")


def _expect_token_shape(got: Tensor, B: int, D: int, h: int, w: int, H: int, W: int,
                        P: int) -> None:  # fmt: skip
    """The output is ``(B, N, D)``: one token per patch, not the convolution's map."""
    N = h * w
    shape = tuple(got.shape)
    if shape == (B, D, h, w):
        raise Wrong.named(MISTAKES, "patch-feature-map", shape=shape)
    if shape == (B, D, N):
        raise Wrong.named(MISTAKES, "patch-not-transposed", shape=shape)
    if len(shape) == 3 and shape[0] == B and shape[2] == D and shape[1] > N:
        fields = {"tokens": shape[1], "H": H, "W": W, "P": P, "N": N}
        if shape[1] == N + 1:
            raise Wrong.named(MISTAKES, "patch-extra-token", **fields)
        overlapping = {((H - P) // s + 1) * ((W - P) // s + 1) for s in range(1, P)}
        if shape[1] in overlapping:  # the count a stride below P gives
            raise Wrong.named(MISTAKES, "patch-overlapping-unfold", **fields)
        raise Wrong.differs(MESSAGES, "patch-token-count", **fields)


def _spans(values: list[int]) -> str:
    """``0-3`` for consecutive values, otherwise the list."""
    if values and values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))


def _token_zero_reads(mine: nn.Module, x: Tensor) -> tuple[list[int], ...] | None:
    """The channels, rows and columns of image 0 that the reader's token 0 depends on (through
    autograd), or None when no gradient flows."""
    image = x.clone().requires_grad_()
    try:
        mine(image)[0, 0].sum().backward()
        used = image.grad[0] != 0  # (C, H, W); a TypeError when no gradient flows
    except Exception:  # a module that cannot be differentiated, or no gradient: nothing to say
        return None
    return tuple(
        torch.nonzero(used.any(dim=d)).flatten().tolist() for d in ((1, 2), (0, 2), (0, 1))
    )


def _differs(mine: nn.Module, got: Tensor, x: Tensor, reference: Tensor, P: int) -> Wrong:
    """The difference, with the pixels token 0 reads when they are not its patch."""
    B, C, H, W = x.shape
    diff = (got - reference).abs().max().item()
    message = say(MESSAGES, "patch-differs", H=H, W=W, P=P, diff=diff)
    reads = _token_zero_reads(mine, x)
    square = (list(range(C)), list(range(P)), list(range(P)))
    if reads is None or reads == square or not all(reads):
        return Wrong(message)
    channels, rows, columns = (_spans(r) for r in reads)
    return Wrong(say(MESSAGES, "patch-reads", message=message, channels=channels, rows=rows,
                     columns=columns, P=P, last=P - 1, C=C))  # fmt: skip


def _diagnose_patches(got: Tensor, x: Tensor, weight: Tensor, b: Tensor, linear: bool,
                      P: int) -> None:  # fmt: skip
    """Raise the mistake (or the difference) that gives the reader's tokens ``got``."""
    B, C, H, W = x.shape
    D, h, w = weight.shape[0], H // P, W // P
    N = h * w
    feature_map = F.conv2d(x, weight, b, stride=P)  # (B, D, h, w)
    reference = feature_map.flatten(2).transpose(1, 2)  # (B, N, D)
    if close(got, feature_map.reshape(B, N, D)):
        raise Wrong.named(MISTAKES, "patch-map-reshaped", shape=tuple(feature_map.shape))
    if close(got, reference - b):
        raise Wrong.named(MISTAKES, "patch-bias-not-added")
    if close(got, reference * D**0.5):
        raise Wrong.named(MISTAKES, "patch-scaled", root=D**0.5)
    if close(got, F.layer_norm(reference, (D,))):
        raise Wrong.named(MISTAKES, "patch-normalised", where=say(MESSAGES, "after"))
    for act in ("gelu", "relu", "tanh"):  # an activation after the projection, as in an MLP
        if close(got, getattr(F, act)(reference)):
            raise Wrong.named(MISTAKES, "patch-activation", act=act)
    patches = F.unfold(x, P, stride=P).transpose(1, 2)  # (B, N, C·P·P), channel-first
    flat = weight.reshape(D, C * P * P)
    if close(got, F.linear(F.layer_norm(patches, (C * P * P,)), flat, b)):
        raise Wrong.named(MISTAKES, "patch-normalised", where=say(MESSAGES, "before"))
    by_columns = reference.view(B, h, w, D).transpose(1, 2).reshape(B, N, D)
    if close(got, by_columns):
        raise Wrong.named(MISTAKES, "patch-grid-by-columns", h=h, w=w)
    if linear:
        w_lin = weight.reshape(D, C * P * P)
        channel_last = w_lin.view(D, P, P, C).permute(0, 3, 1, 2)
        if close(got, F.conv2d(x, channel_last, b, stride=P).flatten(2).transpose(1, 2)):
            raise Wrong.named(MISTAKES, "patch-channel-last")
        swapped = F.conv2d(x, weight.transpose(2, 3), b, stride=P)
        if close(got, swapped.flatten(2).transpose(1, 2)):
            raise Wrong.named(MISTAKES, "patch-swapped-inside")
        strips = F.linear(x.reshape(B, N, C * P * P), w_lin, b)
        if close(got, strips):
            raise Wrong.named(MISTAKES, "patch-strips")


@check("patch embedding", build="cls(in_channels, patch_size, d_model)", call="m(images)")
def check_patch_embedding(cls: type) -> Verdict:
    """``cls(in_channels, patch_size, d_model)`` with a layer ``proj``, called on images
    ``(B, C, H, W)``: returns ``(B, N, D)``, patch ``n`` in row-major order, equal to
    ``nn.Conv2d(C, D, kernel_size=P, stride=P)`` with the same weights (a linear layer's weight
    read as the kernel ``(D, C, P, P)``: each patch flattened channel-first)."""
    # A 3x4 grid of patches (not square) with C = 3, so that every mistake looks different.
    for C, P, D, H, W in ((3, 4, 8, 12, 16), (1, 2, 6, 8, 8)):
        B, h, w = 2, H // P, W // P
        N = h * w
        torch.manual_seed(0)
        mine = cls(C, P, D)
        weight, bias, linear = _patch_weights(mine, C, P, D)
        mine, weight = mine.double(), weight.double()
        b = None if bias is None else bias.detach().double()
        x = randn(B, C, H, W, seed=1)
        with torch.no_grad():
            got = mine(x)
        if not isinstance(got, Tensor):
            raise Wrong.differs(MESSAGES, "patch-not-a-tensor", kind=type(got).__name__)
        _expect_token_shape(got, B, D, h, w, H, W, P)
        what = say(MESSAGES, "patch-output", H=H, W=W, P=P)
        got = expect_tensor(got, what, (B, N, D)).double()
        reference = F.conv2d(x, weight, b, stride=P).flatten(2).transpose(1, 2)  # (B, N, D)
        if b is None:
            raise Wrong.named(MISTAKES, "patch-no-bias")
        if close(got, reference):
            continue
        _diagnose_patches(got, x, weight, b, linear, P)
        raise _differs(mine, got, x, reference, P)
    return "equal to a strided Conv2d with the same weights, patches in row-major order."


# --- Hungarian matching ----------------------------------------------------------------------------


def _kind(thing: object) -> str:
    """What a returned thing is, in a few words: ``a tensor (3,)``, ``a float``, ``a tuple``."""
    shape = getattr(thing, "shape", None)
    return f"{type(thing).__name__} {tuple(shape)}" if shape is not None else type(thing).__name__


def _pairs(result: object, M: int) -> tuple[list[int], list[int]]:
    if isinstance(result, tuple | list) and len(result) == M != 2:
        if all(isinstance(r, tuple | list | Tensor) and len(r) == 2 for r in result):
            raise Wrong.named(MISTAKES, "match-list-of-pairs", M=M)
    if not isinstance(result, tuple | list) or len(result) != 2:
        raise Wrong.differs(MESSAGES, "hungarian-not-a-pair")
    try:
        rows, cols = (torch.as_tensor(r).flatten().long().tolist() for r in result)
    except (TypeError, ValueError, RuntimeError):  # not two arrays of indices
        kinds = ", ".join(_kind(r) for r in result)
        raise Wrong.differs(MESSAGES, "hungarian-not-index-arrays", kinds=kinds) from None
    if len(rows) != len(cols):
        raise Wrong.differs(MESSAGES, "hungarian-lengths", rows=len(rows), cols=len(cols))
    return rows, cols


def _assignment(cost: Tensor, rows: list[int], cols: list[int]) -> float:
    return sum(cost[q, j].item() for q, j in zip(rows, cols, strict=True))


def _greedy(cost: Tensor, by_target: bool) -> set[tuple[int, int]]:
    """Object by object, each takes the cheapest free query (``by_target``); or, over all
    pairs, the cheapest remaining pair first."""
    Q, M = cost.shape
    free_q, free_t, pairs = set(range(Q)), set(range(M)), set()
    while free_t:
        candidates = [(q, j) for q in free_q for j in (free_t if not by_target else [min(free_t)])]
        q, j = min(candidates, key=lambda qj: cost[qj].item())
        pairs.add((q, j))
        free_q.discard(q), free_t.discard(j)
    return pairs


def _optimum(cost: Tensor, maximize: bool = False) -> set[tuple[int, int]]:
    rows, cols = linear_sum_assignment(cost.numpy(), maximize=maximize)
    return set(zip(rows.tolist(), cols.tolist(), strict=True))


MISTAKES |= {
    "match-indices-swapped": "the two indices are swapped: return (query_index, target_index), "
    "the queries (predictions) first.",
    "match-boxes-reshaped": "the box cost is built (M, Q), objects first, and reshaped to (Q, M): "
    "a reshape keeps the numbers in memory order, so each query gets other pairs' costs. "
    "Transpose it (.T), or build it (Q, M): boxes[:, None] - target_boxes[None].",
    "match-per-query": "{Q} pairs for {M} objects: you match each query (prediction) to an object "
    "-- the wrong axis. Each object gets exactly one query; the other {rest} queries are matched "
    "to 'no object'.",
    "match-per-object": "one query is given two objects (query_index {rows}): each object took "
    "its cheapest query on its own. The matching is one-to-one: a query predicts at most one "
    "object.",
    "match-maximises": "you choose the assignment of the largest total cost (maximize=True, or a "
    "cost with both signs turned, a score minimised); the matching minimises it "
    "(linear_sum_assignment(cost), maximize=False).",
    "match-fixed-order": "query k is matched to object k whatever the cost: a fixed order. A set "
    "has no order -- permute the predictions and this rule gives the objects to other "
    "predictions; choose the assignment of least total cost.",
    "match-greedy-by-object": "greedy matching: object by object, each takes its cheapest free "
    "query; that costs {cost:.3f} on one image, the best assignment {best:.3f}. A cheap pair now "
    "can force an expensive one later; the Hungarian algorithm "
    "(scipy.optimize.linear_sum_assignment) finds the global minimum.",
    "match-greedy-cheapest-pair": "greedy matching: taking the cheapest pair first costs "
    "{cost:.3f} on one image, the best assignment {best:.3f}. A cheap pair now can force an "
    "expensive one later; the Hungarian algorithm (scipy.optimize.linear_sum_assignment) finds "
    "the global minimum.",
    "match-raw-logits": "the class cost uses the raw logits; DETR uses the probability "
    "p_query(class), a softmax over the K + 1 classes.",
    "match-plus-class": "the class term has the wrong sign: a query that is sure of the object's "
    "class must cost less, -p_query(class).",
    "match-l2-boxes": "the box cost is the Euclidean (L2) distance; DETR's is the L1 distance, the "
    "sum of |differences| of cx, cy, w, h.",
    "match-class-only": "the box cost is missing: with two objects of one class, only the boxes "
    "say which query should predict which.",
    "match-boxes-only": "the class cost is missing: cost = -p_query(class) + 5 * L1(boxes).",
    "match-list-of-pairs": "you return {M} (query, object) pairs: return two index sequences, "
    "(query_index, target_index), as linear_sum_assignment does -- the queries of all pairs, "
    "then their objects (zip(*pairs) turns one into the other).",
    "match-box-weight-dropped": "the box cost is not 5 times the class cost (weight 1 on the "
    "boxes, or 5 on both terms): DETR's cost is -p_query(class) + 5 * L1(boxes), the L1 distance "
    "times box_weight = 5.",
    "match-weights-swapped": "the weights are swapped: -5 p_query(class) + L1(boxes); DETR's "
    "cost is -p_query(class) + 5 * L1(boxes), the 5 on the boxes.",
    "match-log-prob": "the class cost is -log p_query(class), as in the loss; DETR's matching "
    "uses -p_query(class), the probability itself, so that it sits on the scale of the box "
    "cost.",
    "match-softmax-over-queries": "the softmax runs over the queries (dim 0): each query's "
    "class probabilities are a softmax over its own K + 1 classes, logits.softmax(-1).",
    "match-no-object-dropped": "the softmax leaves out the last class, 'no object': DETR's "
    "p_query(class) is a softmax over all K + 1 classes, so a query sure of 'no object' has a "
    "small p for every real class.",
    "match-argmax-class": "the class cost is 0 or -1, whether the query's most likely class is "
    "the object's: DETR's class cost is -p_query(class), the probability, which still ranks "
    "queries whose best guess is another class.",
    "match-l1-mean": "the box cost is the mean of the four |differences|, a quarter of DETR's L1 "
    "distance, their sum: 5 * L1 weighs the boxes four times as much as yours.",
    "match-increasing-queries": "you try each set of queries in one order only (increasing, as "
    "itertools.combinations gives them), so object j always gets a later query than object "
    "j - 1: try every order (itertools.permutations), or let linear_sum_assignment do it.",
    "match-giou-term": "your cost has DETR's generalised-IoU term, -2 GIoU(boxes), which this "
    "exercise leaves out: the cost is -p_query(class) + 5 * L1(boxes) alone.",
    "match-background-first": "you take class 0 as background and read p_query at labels + 1: "
    "here the classes are 0 .. K - 1 and 'no object' is the last, so p_query(class) is "
    "logits.softmax(-1)[:, labels].",
    "match-objects-in-order": "the object indices are dropped (or sorted on their own, apart from "
    "their queries): linear_sum_assignment(cost) on a (Q, M) cost returns the query rows in "
    "increasing order and, beside them, the objects they get (col_ind), which are not 0 .. M - 1 "
    "in order. Return both arrays as they come.",
}
MESSAGES |= {
    "patch-token-count": "{tokens} tokens for a {H}x{W} image in {P}x{P} patches, which give "
    "N = {N} (H / P by W / P, side by side, no padding).",
    "hungarian-passed": "the least-cost one-to-one assignment on {tried} random images (as "
    "linear_sum_assignment), and it follows the predictions when they are permuted.",
    "hungarian-not-index-arrays": "return two arrays of indices, (query_index, target_index), as "
    "scipy's linear_sum_assignment does; yours returns a pair of ({kinds}). Anything else, such "
    "as the total cost, goes outside the function.",
    "hungarian-not-a-pair": "return two index sequences: (query_index, target_index).",
    "hungarian-lengths": "query_index has {rows} entries and target_index {cols}; one entry per "
    "matched object in both.",
    "hungarian-pair-count": "{pairs} pairs for {M} objects; every object is matched once.",
    "hungarian-past-objects": "{pairs} pairs for {M} objects, and target_index holds {extra}, "
    "past the last object, {last}: a cost padded with 'no object' columns to a square ({Q}, {Q}) "
    "matrix gives such pairs when those columns are kept. Return only the pairs whose target is "
    "< {M}, one per object.",
    "hungarian-targets": "target_index should hold each of the {M} objects once, got {cols}.",
    "hungarian-query-range": "query_index {rows} holds indices outside 0 .. {last}.",
    "hungarian-costs-more": "for Q = {Q} queries and M = {M} objects your assignment {got} costs "
    "{cost:.3f}; the cheapest, {expected}, costs {best:.3f}.",
    "hungarian-order-dependent": "permuting the predictions changed which prediction gets which "
    "object: the matching must follow the predictions, not their order.",
}


def _image(seed: int, Q: int, M: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One probe image: logits ``(Q, 4)``, boxes ``(Q, 4)``, labels ``(M,)``, target boxes."""
    g = torch.Generator().manual_seed(100 + seed)
    logits = 2 * torch.randn(Q, 4, generator=g, dtype=torch.float64)
    boxes = torch.rand(Q, 4, generator=g, dtype=torch.float64)
    labels = torch.randint(0, 3, (M,), generator=g)
    return logits, boxes, labels, torch.rand(M, 4, generator=g, dtype=torch.float64)


def _expect_one_to_one(rows: list, cols: list, expected: set, Q: int, M: int) -> None:
    """The pairs are (query, object), each object matched once, each query at most once (a
    swap is told only where Q != M: on a square image it may be a coincidence)."""
    if Q != M and set(zip(cols, rows, strict=True)) == expected:
        raise Wrong.named(MISTAKES, "match-indices-swapped")
    if any(j >= M for j in cols):
        extra = sorted({j for j in cols if j >= M})
        raise Wrong.differs(MESSAGES, "hungarian-past-objects", pairs=len(rows), M=M, extra=extra,
                            last=M - 1, Q=Q)  # fmt: skip
    each_query = sorted(rows) == list(range(Q)) and min(cols) >= 0  # each to an object
    if len(rows) == Q != M and each_query:
        raise Wrong.named(MISTAKES, "match-per-query", Q=Q, M=M, rest=Q - M)
    if len(rows) != M:
        raise Wrong.differs(MESSAGES, "hungarian-pair-count", pairs=len(rows), M=M)
    if sorted(cols) != list(range(M)):
        raise Wrong.differs(MESSAGES, "hungarian-targets", M=M, cols=cols)
    if len(set(rows)) < M:
        raise Wrong.named(MISTAKES, "match-per-object", rows=rows)
    if not all(0 <= q < Q for q in rows):
        raise Wrong.differs(MESSAGES, "hungarian-query-range", rows=rows, last=Q - 1)


def _alternatives(args: tuple, cost: Tensor) -> dict[str, set]:
    """The assignment each known mistake of ``_MATCHING_MISTAKES`` makes on one image."""
    logits, boxes, labels, target_boxes = args
    M = len(labels)
    prob = logits.softmax(-1)[:, labels]  # (Q, M)
    l1, l2 = torch.cdist(boxes, target_boxes, p=1), torch.cdist(boxes, target_boxes, p=2)
    return {
        "match-maximises": _optimum(cost, maximize=True),
        "match-fixed-order": {(k, k) for k in range(M)},
        "match-greedy-by-object": _greedy(cost, by_target=True),
        "match-greedy-cheapest-pair": _greedy(cost, by_target=False),
        "match-raw-logits": _optimum(-logits[:, labels] + 5 * l1),
        "match-plus-class": _optimum(prob + 5 * l1),
        "match-l2-boxes": _optimum(-prob + 5 * l2),
        "match-class-only": _optimum(-prob),
        "match-boxes-only": _optimum(l1),
        "match-box-weight-dropped": _optimum(-prob + l1),
        "match-weights-swapped": _optimum(-5 * prob + l1),
        "match-log-prob": _optimum(-prob.log() + 5 * l1),
        "match-softmax-over-queries": _optimum(-logits.softmax(0)[:, labels] + 5 * l1),
        "match-no-object-dropped": _optimum(-logits[:, :-1].softmax(-1)[:, labels] + 5 * l1),
        "match-argmax-class": _optimum(-(logits.argmax(-1)[:, None] == labels).double() + 5 * l1),
        "match-l1-mean": _optimum(-prob + 5 * l1 / 4),
        "match-increasing-queries": _increasing(cost),
        "match-objects-in-order": {(q, j) for j, (q, _) in enumerate(sorted(_optimum(cost)))},
        "match-giou-term": _optimum(cost - 2 * _giou(boxes, target_boxes)),
        "match-boxes-reshaped": _optimum(-prob + 5 * l1.T.reshape(l1.shape)),
        "match-background-first": _optimum(-logits.softmax(-1)[:, labels + 1] + 5 * l1),
    }


def _giou(boxes: Tensor, targets: Tensor) -> Tensor:
    """DETR's generalised IoU of every (cx, cy, w, h) box with every target box, ``(Q, M)``."""
    a, b = (
        torch.cat([t[:, :2] - t[:, 2:] / 2, t[:, :2] + t[:, 2:] / 2], -1) for t in (boxes, targets)
    )
    area_a, area_b = (a[:, 2:] - a[:, :2]).prod(-1), (b[:, 2:] - b[:, :2]).prod(-1)  # (Q,), (M,)
    lo, hi = torch.max(a[:, None, :2], b[None, :, :2]), torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (hi - lo).clamp(min=0).prod(-1)  # (Q, M)
    union = area_a[:, None] + area_b[None, :] - inter
    lo, hi = torch.min(a[:, None, :2], b[None, :, :2]), torch.max(a[:, None, 2:], b[None, :, 2:])
    hull = (hi - lo).prod(-1)  # the smallest box around both
    return inter / union - (hull - union) / hull


def _increasing(cost: Tensor) -> set[tuple[int, int]]:
    """The cheapest assignment among those that give object j a later query than object j - 1
    (what trying ``itertools.combinations`` of the queries finds)."""
    Q, M = cost.shape
    best = min(combinations(range(Q), M), key=lambda qs: sum(cost[q, j].item() for j, q in
                                                             enumerate(qs)))  # fmt: skip
    return {(q, j) for j, q in enumerate(best)}


def _expect_follows_predictions(fn: Callable) -> None:
    """Permuting the predictions permutes the matching: the same objects go to the same
    predictions, wherever they stand in the list."""
    g = torch.Generator().manual_seed(7)
    Q, M = 6, 3
    logits = 2 * torch.randn(Q, 4, generator=g, dtype=torch.float64)
    boxes = torch.rand(Q, 4, generator=g, dtype=torch.float64)
    labels, target_boxes = torch.tensor([0, 2, 0]), torch.rand(M, 4, generator=g).double()
    perm = torch.randperm(Q, generator=g)
    rows, cols = _pairs(fn(logits, boxes, labels, target_boxes), M)
    rows_p, cols_p = _pairs(fn(logits[perm], boxes[perm], labels, target_boxes), M)
    before = set(zip(rows, cols, strict=True))
    after = {(perm[q].item(), j) for q, j in zip(rows_p, cols_p, strict=True)}
    if before != after:
        raise Wrong.differs(MESSAGES, "hungarian-order-dependent")


@check("Hungarian matching", call="fn(logits, boxes, target_labels, target_boxes)")
def check_hungarian_matching(fn: Callable) -> Verdict:
    """``fn(logits, boxes, target_labels, target_boxes) -> (query_index, target_index)`` for one
    image: logits ``(Q, K + 1)``, boxes ``(Q, 4)``, labels ``(M,)``, target boxes ``(M, 4)``,
    ``M <= Q``; the one-to-one assignment of the M objects to M of the Q queries of least total
    cost ``-p_query(class) + 5 * L1(box, object box)`` (the book's ``matching_cost``), as
    ``scipy.optimize.linear_sum_assignment`` finds it."""
    tried, suspects, first_failure = 0, None, None
    images = [*enumerate([(6, 4), (5, 3), (6, 4), (4, 4), (6, 2), (6, 4)]), (27, (6, 3))]
    for seed, (Q, M) in images:  # image 27 tells the class costs and the box costs apart
        args = _image(seed, Q, M)
        rows, cols = _pairs(fn(*(a.clone() for a in args)), M)
        cost = matching_cost(*args).double()  # (Q, M)
        expected = set(zip(*(t.tolist() for t in hungarian_match(*args)), strict=True))
        got = set(zip(rows, cols, strict=True))
        # a mistake is named only if it gives the reader's answer on every image: the
        # images the reader got right as well as the others
        found = {name for name, pairs in _alternatives(args, cost).items() if pairs == got}
        suspects = found if suspects is None else suspects & found
        if got == expected:
            tried += 1
            continue
        _expect_one_to_one(rows, cols, expected, Q, M)
        if first_failure is None:
            best = _assignment(cost, *zip(*sorted(expected), strict=True))
            first_failure = {"Q": Q, "M": M, "got": sorted(got), "expected": sorted(expected),
                             "cost": _assignment(cost, rows, cols), "best": best}  # fmt: skip
    if first_failure is not None:
        if len(suspects) == 1:  # named only if it alone gives the reader's answer on every image
            raise Wrong.named(MISTAKES, suspects.pop(), **first_failure)
        raise Wrong.differs(MESSAGES, "hungarian-costs-more", **first_failure)
    _expect_follows_predictions(fn)
    return say(MESSAGES, "hungarian-passed", tried=tried)
