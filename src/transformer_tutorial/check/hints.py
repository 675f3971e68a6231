"""Hints for the errors Python and PyTorch raise in a reader's code: what the error's words (or
the failing line) usually mean in this book's blocks, and the fix that usually follows.

``for_error(err, line)`` gives the hints for one error; the engine adds them to the verdict.
"""

from __future__ import annotations

import re

from .verdict import say

MESSAGES = {
    "hint-dtype": "the check calls your code with float64 tensors: make each new tensor with "
    "the input's dtype (torch.zeros_like(x), or dtype=x.dtype), or cast your result at the end.",
    "hint-super-init": "an nn.Module subclass calls super().__init__() first in its __init__, "
    "before it sets any layer or attribute: nn.Module sets up its registries and hooks there.",
    "hint-unpack": "the line unpacks a tensor's shape (or a result) into names, and it has another "
    "number of parts: print its shape. Often a tensor has an axis too many or too few (an "
    "unsqueeze where the axis is already there, a mask that already broadcasts), or a pair "
    "(output, weights) stands where one tensor was meant.",
    "hint-bmm": "torch.bmm takes 3-D tensors only, and the check also passes inputs with more "
    "leading axes, (B, h, T, d) with heads: use `@` (torch.matmul), which works for any.",
    "hint-too-many-indices": "the tensor has fewer axes than the indexing assumes: often a "
    "squeeze() without an axis dropped one of size 1 (the batch, when there is one sentence). "
    "Name the axis, `.squeeze(-1)`, or index it away (`logits[:, -1]`).",
    "hint-out-of-bounds": "an index equals (or passes) the size of its axis: indices run from 0 to "
    "n - 1. An index one too far (the last of L tokens is at L - 1) does this, and so does an "
    "index meant for another axis (a flat index split by the wrong size, a gather or scatter "
    "along the wrong dim).",
    "hint-expand-axes": "a tensor has more axes than the shape it is used in: often an RNN state "
    "(num_layers, B, D) where (B, D) belongs -- take state[-1].",
    "hint-none-value": "a value is None where a number was needed: a variable that keeps its "
    "starting None because the loop meant to set it never did (a range one short, a condition "
    "never true), or a function that returns nothing on some path.",
    "hint-none": "a value here is None. The check also calls your code with an optional argument "
    "left at None (such as mask=None, no mask at all): handle None first (`if mask is None: "
    "...`). Or a function of yours returns nothing (a missing `return`) where its result is "
    "used.",
    "hint-broadcast": "two shapes do not line up here: print them. A reduction without "
    "keepdim=True (x.mean(-1) is (..., T), not (..., T, 1)), a missing unsqueeze, or a split "
    "along the wrong axis (chunk and split cut dim 0 unless given dim=) are the usual causes.",
    "hint-tuple": "a tuple stands where a tensor belongs: attention returns (output, weights), an "
    "RNN (output, state), and an LSTM's state is a pair (h, c). Unpack it and use the part you "
    "mean, e.g. `out, _ = self.self_attn(...)` or `h, c = state`.",
    "hint-transpose-axes": "`transpose(1, 2)` swaps axes 1 and 2, which are the last two only "
    "for a 3-D tensor: the check also passes inputs with more leading axes, (B, h, T, d) with "
    "heads. Swap the last two, `.transpose(-2, -1)` (or `.mT`).",
    "hint-transpose-batch": "`transpose(0, 1)` swaps axis 0, the batch of a batch-first "
    "tensor, with axis 1. For q k^T swap the keys' last two axes, `.transpose(-2, -1)` (or "
    "`.mT`).",
    "hint-dot-t": "if the tensor before `.T` has more than two axes, `.T` reverses every one "
    "of them: (B, T, d).T is (d, T, B). Swap the last two only, `.transpose(-2, -1)` (or `.mT`).",
    "hint-view": "after a transpose the tensor is not contiguous, so view cannot merge its axes: "
    "use .reshape(...) (or .contiguous().view(...)).",
    "hint-truth": "`if`, `and`, `or` and `not` need one True or False, and a tensor of several "
    "values is neither: test an optional argument with `if mask is not None:`, and combine masks "
    "element by element with `&`, `|` and `~`.",
    "hint-bool-mask": "this operation wants a boolean mask (dtype torch.bool) and got numbers: make "
    "the mask with a comparison (`positions < lengths[:, None]` is boolean) or dtype=torch.bool; a "
    "0/1 float mask becomes one with `mask.bool()`, an additive 0/-inf mask with `mask == 0`.",
    "hint-in-place": "an in-place operation (a method ending in `_` such as `masked_fill_`, `+=`, "
    "or an assignment into a slice) changed a tensor that autograd still needs, perhaps the "
    "caller's own input: leave the inputs as they were. Use the out-of-place form "
    "(`x = x.masked_fill(...)`, `x = x + y`), or work on a `.clone()`.",
    "hint-matmul": "a matrix product got sizes that do not fit: for `a @ b` the last axis of a must "
    "equal the second-to-last of b (and their batch axes must agree), and an nn.Linear takes "
    "inputs whose last axis is its in_features. Check which tensor goes into which layer or "
    "product, and which axis holds the features.",
    "hint-cross-entropy": "F.cross_entropy (and nll_loss) wants logits (N, V) with targets (N,), "
    "or (B, V, T) with targets (B, T): the classes on axis 1, one target per position. Print both "
    "shapes. Classes elsewhere: flatten both (`logits.reshape(-1, V)`, `targets.reshape(-1)`) or "
    "`logits.transpose(1, 2)`. Logits for more or fewer positions than targets: the model's input "
    "has another length (a decoder input is the targets shifted, `[BOS] + tgt[:, :-1]`).",
    "hint-bool-index": "indexing with a boolean mask (`x[mask] = value`) needs the mask to have the "
    "shape of x's leading axes: it does not broadcast. `x.masked_fill(mask, value)` broadcasts, "
    "and leaves x as it was.",
    "hint-reshape-size": "a view or reshape asks for sizes whose product is not the tensor's number "
    "of elements: a size taken from another tensor or axis (the queries' length for the keys', "
    "D for D/h, ...). Read each size off the tensor you reshape, e.g. `B, T, _ = x.shape`.",
    "hint-join": "torch.cat joins tensors along an axis they have (`dim=`) and torch.stack along a "
    "new one; every other axis must agree. Check the axis you join along, and each piece's shape.",
    "hint-dim-range": "the tensor has fewer axes than the line assumes: count axes from the end "
    "(dim=-1 is the last) so that the same line works with and without batch or head axes, or "
    "check which tensor this is.",
    "hint-index-range": "an nn.Embedding (or an index) got an id outside 0 .. size - 1: a token "
    "id not below the vocabulary size, a position not below max_len, or a negative placeholder "
    "(such as -100 or -1) used as an id. Check which ids go into which table.",
    "hint-cast": "an in-place operation would store fractions in an integer tensor (`+=`, `*=` or "
    "`/=` into a long tensor, such as one made from token ids): make it a float tensor first, or "
    "compute out of place.",
    "hint-one-element": "float(), int() and .item() turn a one-element tensor into a Python "
    "number, and this tensor has several: keep it a tensor and compute with tensor operations, or "
    "index the element you mean.",
    "hint-index-dtype": "indices must be integer tensors (long): ids or positions made with float "
    "arithmetic need `.long()` (torch.arange of integers gives long).",
    "hint-channels": "nn.Conv2d wants images as (B, C, H, W), the channels on axis 1: images with "
    "their channels last (B, H, W, C) need `.permute(0, 3, 1, 2)`, or the layer's in_channels "
    "is not the images' C.",
}

# the error's words -> the hint
# what Python says when an nn.Module subclass skipped super().__init__()
SUPER_INIT = (
    r"before Module\.__init__\(\) call|has no attribute "
    r"'_(backward_hooks|forward_hooks|forward_pre_hooks|parameters|buffers|modules)'"
)
ERRORS = {
    r"did not match|expected scalar type|same dtype|dtype of|Found dtype": "hint-dtype",
    r"view size is not compatible with input tensor's size and stride": "hint-view",
    r"for unary ~: 'NoneType'|'NoneType' object (has no attribute|is not subscriptable)": "hint-none",
    r"The size of tensor a \(\d+\) must match the size of tensor b": "hint-broadcast",
    r"must be Tensor, not tuple|unsupported operand type\(s\) for .*'tuple'": "hint-tuple",
    r"The expanded size of the tensor \(\d+\) must match the existing size": "hint-broadcast",
    r"Boolean value of Tensor with more than one value is ambiguous": "hint-truth",
    r"only implemented on integer and Boolean|only supports boolean masks|"
    r"expected condition to be a boolean": "hint-bool-mask",
    r"leaf Variable that requires grad is being used in an in-place|modified by an inplace": (
        "hint-in-place"
    ),
    r"mat1 and mat2 shapes cannot be multiplied|first two dimensions of batch2": "hint-matmul",
    r"Expected target size|Expected input batch_size": "hint-cross-entropy",
    r"The shape of the mask \[.*\] at index \d+ does not match": "hint-bool-index",
    r"shape '\[[-\d, ]*\]' is invalid for input of size": "hint-reshape-size",
    r"Sizes of tensors must match except in dimension|stack expects each tensor to be equal": (
        "hint-join"
    ),
    r"Dimension out of range": "hint-dim-range",
    r"index out of range in self": "hint-index-range",
    r"result type \w+ can't be cast to the desired output type": "hint-cast",
    r"only one element tensors can be converted|elements cannot be converted to Scalar": (
        "hint-one-element"
    ),
    r"tensors used as indices must be long|'indices' to have one of the following scalar": (
        "hint-index-dtype"
    ),
    r"expected input\[.*\] to have \d+ channels, but got": "hint-channels",
    r"too many values to unpack|not enough values to unpack": "hint-unpack",
    SUPER_INIT: "hint-super-init",
    r"'NoneType' object cannot be interpreted as an integer": "hint-none-value",
    r"not supported between instances of .*'NoneType'": "hint-none",
    r"batch[12] must be a 3D tensor": "hint-bmm",
    r"too many indices for tensor of dimension": "hint-too-many-indices",
    r"index -?\d+ is out of bounds for dimension": "hint-out-of-bounds",
    r"number of sizes provided \(\d+\) must be greater or equal to the number of dimensions": (
        "hint-expand-axes"
    ),
}

# what a failing line of the reader's holds, when the error's words alone say little
LINES = {
    r"\.transpose\(\s*(1\s*,\s*2|2\s*,\s*1)\s*\)": "hint-transpose-axes",
    r"\.T\b": "hint-dot-t",
    r"\.transpose\(\s*(0\s*,\s*1|1\s*,\s*0)\s*\)": "hint-transpose-batch",
}


def for_error(err: BaseException, line: str) -> list[str]:
    """The hints for ``err``, raised at ``line`` of the reader's code (none if nothing fits)."""
    shapes = re.search(r"size|shape|dimension", str(err))  # the line's hint is about shapes
    keys = [h for pattern, h in ERRORS.items() if re.search(pattern, str(err))]
    if keys in ([], ["hint-broadcast"]):  # the line may say more than the generic hint
        keys = [h for p, h in LINES.items() if shapes and re.search(p, line)] + keys
    return [say(MESSAGES, key) for key in keys]
