"""What every family of checks does with tensors: make seeded inputs, compare results whatever
their dtype, demand a tensor of a shape, a gradient, and the book's layers in a reader's module."""

from __future__ import annotations

import inspect
import itertools
import math

import torch
from torch import Tensor

from .verdict import Wrong, say

MESSAGES = {
    "not-a-tensor": "{what} should be a tensor of shape {shape}, got {kind}.",
    "input-values-changed": "your function changed the values of its input {what} in place (a "
    "method ending in _ such as relu_ or masked_fill_, +=, or a slice assignment): the caller's tensor must stay as it was. Use the "
    "out-of-place form (x = x.masked_fill(...), x = x + ...).",
    "wrong-shape": "{what} has shape {got}, expected {shape}.",
    "no-gradient": "no gradient flows back through {what}: did you detach() something, or build "
    "a new tensor from plain numbers (torch.tensor(...), .item())?",
    "not-a-module": "your class should be an nn.Module (class My...(nn.Module)); it builds {kind}.",
    "missing-layer": "the module needs {kind} `{name}`, as in the book.",
    "torch-multihead": "`{name}` is PyTorch's nn.MultiheadAttention, whose projections are one "
    "packed in_proj_weight, and whose forward takes another mask (attn_mask / "
    "key_padding_mask, True = *hidden*): the exercise builds the block from the book's "
    "MultiHeadAttention(d_model, num_heads), with q_proj, k_proj, v_proj and out_proj.",
    "layer-size": "`{name}` holds {got}; the book's holds {want}.",
    "init-order-sizes": "Given the same sizes in the order ({order}), your class has the "
    "book's sizes: check the order in which your __init__ takes them (the book's is {params}) "
    "and which size each layer is built from.",
    "shape-and-relation": "{what} has shape {got}, expected {shape}: {relation}",
    "shape-swapped": "the same sizes with axes {axes} swapped (a transpose or permute missing or "
    "extra, or one sequence-first layout where the other is batch-first).",
    "shape-reordered": "the same sizes in another order (a transpose or permute missing or extra).",
    "shape-one-off": "axis {axis} holds {got_n} entries where {want_n} belong, one {more_less}: an "
    "off-by-one (a range or slice that starts at 1 or stops one early, or a token added or "
    "dropped), or a size taken from another tensor.",
    "shape-broadcast-one": "axis {axis} holds {got_n} entries where it should have size 1: "
    "something was broadcast along it (often an axis of size 1 dropped by a squeeze() without "
    "an axis, or by a reduction without keepdim=True, and the tensor then broadcast against "
    "another).",
    "shape-extra-one": "an extra axis of size 1 at position {axis} (a keepdim=True or unsqueeze "
    "too many).",
    "shape-missing-axis": "axis {axis} (size {size}) is missing: it was reduced or indexed away "
    "(a sum, mean or max over dim={axis} -- torch.max(x, {axis}) is a maximum over that axis, "
    "not an element-wise max(x, {axis}) -- or an integer index such as x[0]).",
    "shape-other-size": "axis {axis} holds {got_n} entries, {name}, where {want_n} belong: the "
    "result is built from the wrong tensor (check which tensor the last product or sum uses).",
    "shape-more": "too many",
    "shape-fewer": "too few",
    "shape-extra-axis": "an extra axis of size {size} at position {axis}: an axis the result "
    "should not have (one to sum, average or index away, or one a tensor broadcast in, such as "
    "a mask given an axis with unsqueeze where it already broadcasts), or another result in "
    "this one's place.",
}

# The names the checks give a result or a size in a message's {what} or {name} field. Each is a
# message of the catalog, so that say() gives it in the language in use: a Chinese verdict
# then calls the output 输出, not "the output".
NAMES = {
    "output": "the output",
    "weights": "the weights",
    "predictions": "the predictions",
    "table": "the table",
    "logits": "the logits",
    "new-state": "the new state",
    "mask-for-t": "the mask for T = {T}",
    "linear": "a linear layer",
    "nn-kind": "an nn.{kind}",
    "d-k-keys": "d_k, the keys' width",
    "hidden-dim": "hidden_dim (W_k's width)",
    "t-k-summed": "T_k, the number of keys (a sum over the queries leaves one value per key)",
}

MISTAKES = {
    "flattened-positions": "{what} has shape {got}, expected {shape}: the leading axes are "
    "flattened into one. Reshape the result back to the input's leading axes, "
    "`.reshape(*x.shape[:-1], -1)`.",
    "input-changed-in-place": "your function changed the shape of its input {what} in place, "
    "from {before} to {after} (an unsqueeze_, squeeze_ or resize_): the caller's tensor must "
    "stay as it was. Use the out-of-place form, x = x.unsqueeze(-1).",
    "init-order": "your class takes its sizes in another order than the book's: built as the "
    "book builds it, {book_call}, its layers have other sizes than the book's, and given the "
    "same sizes in the order ({order}) they have the book's. Take them in the book's order, "
    "__init__(self, {params}).",
    "layers-swapped": "`{a}` has the size of the book's `{b}` ({want_b}), and `{b}` that of "
    "`{a}` ({want_a}): the two layers are in each other's place. Each is named for what it "
    "takes: give `{a}` the sizes {want_a} and use it where the book uses `{a}`.",
    "linear-sizes-reversed": "`{name}` holds a weight {got}, the book's {want}: nn.Linear("
    "in_features, out_features) takes the size of its input first, and this layer was given "
    "its two sizes the other way round.",
    "linear-sizes-reversed-or-swapped": "`{a}` holds a weight {want_b} where the book's holds "
    "{want_a}, and `{b}` one {want_a} where the book's holds {want_b}: either each nn.Linear "
    "was given its sizes the other way round (nn.Linear(in_features, out_features) takes the "
    "size of its input first), or the two layers are in each other's place.",
    "dtype-lowered": "your result, {what}, has dtype {got} where the inputs are {want} (its "
    "values are right to {got}'s precision): a cast inside your code lowers it (.float(), "
    ".to(torch.float32), or a new tensor such as torch.zeros(shape) made without "
    "dtype=x.dtype). Keep the inputs' dtype (x.dtype), as PyTorch's own functions do.",
    "pair-reversed": "you return ({second}, {first}): the pair is ({first}, {second}), {first} "
    "first.",
    "squeezed-size-one": "{what} has shape {got}, expected {shape}: an axis of size 1 is gone. "
    "Either a `.squeeze()` with no argument dropped it (it drops them all, the batch's or a "
    "length's too when it happens to be 1: name the axis, `.squeeze(-1)`), or the tensor comes "
    "from a place without that axis (an RNN's output (B, D) for its state (1, B, D)): return the "
    "one asked for, or `.unsqueeze` the axis back.",
}

# The tolerance a result of each dtype can be held to: its rounding, a few operations deep.
# float64's is the default for every check (a check may ask for a tighter one); a float32 result
# that a check casts to float64 itself still meets it.
TOLERANCE = {
    torch.float64: 1e-5,
    torch.float32: 1e-4,
    torch.float16: 5e-3,
    torch.bfloat16: 3e-2,
}


def unpacks_to(result: object, n: int) -> bool:
    """Is ``result`` a tuple or list of ``n`` items, as ``a, b = result`` unpacks it?"""
    return isinstance(result, (tuple, list)) and len(result) == n


def expect_pair_order(result: object, names: tuple[str, str], shapes: tuple[tuple, tuple]) -> None:
    """A pair returned the other way round: the first item has the second's shape and the
    second the first's (shapes that differ)."""
    if unpacks_to(result, 2) and shapes[0] != shapes[1]:
        got = [tuple(r.shape) if isinstance(r, Tensor) else None for r in result]
        if got == [tuple(shapes[1]), tuple(shapes[0])]:
            raise Wrong.named(MISTAKES, "pair-reversed", first=names[0], second=names[1])


def tolerance(t: Tensor) -> float:
    """How closely a result of ``t``'s dtype can match the reference."""
    return TOLERANCE.get(t.dtype, TOLERANCE[torch.float64])


def close(a: Tensor, b: Tensor, tol: float | None = None) -> bool:
    """Same shape and the same values, compared in float64 to ``tol`` (default 1e-5), loosened
    to the precision of the coarser dtype when a result is float32, float16 or bfloat16."""
    if a.shape != b.shape:
        return False
    floor = max(0.0 if t.dtype == torch.float64 else tolerance(t) for t in (a, b))
    limit = max(TOLERANCE[torch.float64] if tol is None else tol, floor)
    a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
    return bool(torch.allclose(a64, b64, atol=limit, rtol=limit, equal_nan=False))


def expect_dtype_kept(result: object, like: Tensor, what: str) -> None:
    """A float result keeps the float dtype of the inputs it is computed from (the check's
    inputs are float64): called once its values are known to be right."""
    if isinstance(result, Tensor) and result.is_floating_point() and result.dtype != like.dtype:
        got, want = (str(t.dtype).replace("torch.", "") for t in (result, like))
        raise Wrong.named(MISTAKES, "dtype-lowered", what=what, got=got, want=want)


def expect_tensor(result: object, what: str, shape: tuple, sizes: dict | None = None) -> Tensor:
    """``result`` if it is a tensor of ``shape``; otherwise say what it is (``sizes`` names the
    sizes of other quantities in play, which a wrong axis may have taken)."""
    shape = tuple(shape)
    if not isinstance(result, Tensor):
        raise Wrong.differs(MESSAGES, "not-a-tensor", what=what, shape=shape,
                      kind=type(result).__name__)  # fmt: skip
    if tuple(result.shape) != shape:
        got = tuple(result.shape)
        if _without_ones(shape, got):
            raise Wrong.named(MISTAKES, "squeezed-size-one", what=what, got=got, shape=shape)
        if len(shape) > 2 and got == (math.prod(shape[:-1]), shape[-1]):
            raise Wrong.named(MISTAKES, "flattened-positions", what=what, got=got, shape=shape)
        relation = shape_relation(got, shape, sizes or {})
        if relation is None:
            raise Wrong.differs(MESSAGES, "wrong-shape", what=what, got=got, shape=shape)
        raise Wrong.differs(MESSAGES, "shape-and-relation", what=what, got=got, shape=shape,
                            relation=relation)  # fmt: skip
    return result


def expect_kept(given: dict[str, Tensor], originals: dict[str, Tensor]) -> None:
    """Raise when the reader's code changed a tensor it was ``given`` (copies of ``originals``)."""
    for name, tensor in given.items():
        before = originals[name]
        if tensor.shape != before.shape:
            raise Wrong.named(MISTAKES, "input-changed-in-place", what=name,
                              before=tuple(before.shape), after=tuple(tensor.shape))  # fmt: skip
        if not torch.equal(tensor, before):
            raise Wrong.differs(MESSAGES, "input-values-changed", what=name)


def shape_relation(got: tuple, shape: tuple, sizes: dict | None = None) -> str | None:
    """What a wrong shape tells about its cause, when it tells something: the expected sizes
    reordered, one axis one off, or one axis too many."""
    if len(got) == len(shape) and sorted(got) == sorted(shape):
        moved = [i for i, (g, s) in enumerate(zip(got, shape, strict=True)) if g != s]
        if len(moved) == 2:
            return say(MESSAGES, "shape-swapped", axes=f"{moved[0]} and {moved[1]}")
        return say(MESSAGES, "shape-reordered")
    if len(got) == len(shape):
        off = [i for i, (g, s) in enumerate(zip(got, shape, strict=True)) if g != s]
        named = [n for n, size in (sizes or {}).items() if len(off) == 1 and size == got[off[0]]]
        if named:  # the size of another quantity: the wrong tensor, not an off-by-one
            return say(MESSAGES, "shape-other-size", axis=off[0], got_n=got[off[0]],
                       want_n=shape[off[0]], name=named[0])  # fmt: skip
        if len(off) == 1 and shape[off[0]] == 1:
            return say(MESSAGES, "shape-broadcast-one", axis=off[0], got_n=got[off[0]])
        if len(off) == 1 and abs(got[off[0]] - shape[off[0]]) == 1:
            i = off[0]
            more = "more" if got[i] > shape[i] else "fewer"
            return say(MESSAGES, "shape-one-off", axis=i, got_n=got[i], want_n=shape[i],
                       more_less=say(MESSAGES, f"shape-{more}"))  # fmt: skip
        return None
    if len(got) == len(shape) + 1:
        for i in range(len(got)):
            if got[:i] + got[i + 1 :] == shape:
                key = "shape-extra-one" if got[i] == 1 else "shape-extra-axis"
                return say(MESSAGES, key, axis=i, size=got[i])
    gone = [i for i in range(len(shape)) if shape[:i] + shape[i + 1 :] == got and shape[i] > 1]
    if len(got) == len(shape) - 1 and len(gone) == 1:  # one axis, and only one, is missing
        return say(MESSAGES, "shape-missing-axis", axis=gone[0], size=shape[gone[0]])
    return None


def _without_ones(shape: tuple, got: tuple) -> bool:
    """Is ``got`` ``shape`` with one or more of its axes of size 1 left out?"""
    if len(got) >= len(shape):
        return False
    rest = list(got)
    for size in shape:
        if rest and rest[0] == size:
            rest.pop(0)
        elif size != 1:
            return False
    return not rest


def backward(result: Tensor, what: str = "your result") -> None:
    """``result.backward()``, or a sentence when no gradient can flow back through it."""
    if not result.requires_grad:
        raise Wrong.differs(MESSAGES, "no-gradient", what=what)
    result.backward()


def randn(*shape: int, seed: int = 0) -> Tensor:
    """A seeded float64 tensor of standard normal values."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _submodule(module: torch.nn.Module, name: str) -> torch.nn.Module | None:
    try:
        return module.get_submodule(name)
    except AttributeError:
        return None


def with_weights_of(mine: torch.nn.Module, reference: torch.nn.Module, names: tuple) -> None:
    """Copy the reader's weights into the reference, once each named layer is there, of the
    book's kind and size; a dotted name reaches into a submodule (``self_attn.q_proj``)."""
    if not isinstance(mine, torch.nn.Module):
        raise Wrong.differs(MESSAGES, "not-a-module", kind=type(mine).__name__)
    for name in names:
        ours = reference.get_submodule(name)
        try:
            theirs = mine.get_submodule(name)
        except AttributeError:
            theirs = None
        kind = type(ours).__name__
        kind = say(NAMES, "linear") if kind == "Linear" else say(NAMES, "nn-kind", kind=kind)
        if not isinstance(theirs, type(ours)):
            parent = name.rpartition(".")[0]
            if parent and isinstance(_submodule(mine, parent), torch.nn.MultiheadAttention):
                raise Wrong.differs(MESSAGES, "torch-multihead", name=parent)
            raise Wrong.differs(MESSAGES, "missing-layer", kind=kind, name=name)
        sizes = [{k: tuple(t.shape) for k, t in m.state_dict().items()} for m in (theirs, ours)]
        if sizes[0] != sizes[1]:
            _explain_sizes(mine, reference, names, name)
            raise Wrong.differs(MESSAGES, "layer-size", name=name, got=sizes[0], want=sizes[1])
    reference.load_state_dict(mine.state_dict(), strict=False)


def _weight(module: torch.nn.Module, name: str) -> tuple | None:
    weight = getattr(_submodule(module, name), "weight", None)
    return tuple(weight.shape) if isinstance(weight, Tensor) else None


def _explain_sizes(mine: torch.nn.Module, reference: torch.nn.Module, names: tuple, name: str):
    """Name what a layer of the wrong size shows: two layers in each other's place, an
    nn.Linear given its sizes the other way round, or (when the sizes cannot tell) either."""
    want, got = _weight(reference, name), _weight(mine, name)
    kinds = {type(_submodule(m, name)) for m in (mine, reference)}
    turned = kinds == {torch.nn.Linear} and None not in (got, want) and got != want == got[::-1]
    for other in names:
        if other != name and got == _weight(reference, other) != want == _weight(mine, other):
            key = "linear-sizes-reversed-or-swapped" if turned else "layers-swapped"
            raise Wrong.named(MISTAKES, key, a=name, b=other, want_a=want, want_b=got)
    if turned:
        raise Wrong.named(MISTAKES, "linear-sizes-reversed", name=name, got=got, want=want)


def build(cls: type, sizes: tuple, book: type, names: tuple) -> torch.nn.Module:
    """The reader's module built as the book builds ``book(*sizes)``, its layers ``names`` of the
    book's kind and sizes. When they are not, but the sizes given in another order build them,
    the reader's ``__init__`` takes its sizes in another order: that is named."""
    try:
        mine = cls(*sizes)
        with_weights_of(mine, book(*sizes), names)
        return mine
    except Exception as err:
        order = _order_that_builds(cls, sizes, book, names)
        if order is None:
            raise
        params = list(inspect.signature(book.__init__).parameters)[1 : len(sizes) + 1]
        book_call = ", ".join(f"{p}={v}" for p, v in zip(params, sizes, strict=True))
        shown = [params[sizes.index(v)] for v in order]
        fields = dict(book_call=f"{cls.__name__}({book_call})", order=", ".join(shown),
                      params=", ".join(params))  # fmt: skip
        if _parameters(cls)[: len(sizes)] == shown:  # the reader's own names say so
            raise Wrong.named(MISTAKES, "init-order", **fields) from err
        if not isinstance(err, Wrong) or err.mistake is not None:
            raise  # the reader's own error keeps its place and line; a name stays as it is
        raise Wrong(f"{err} {say(MESSAGES, 'init-order-sizes', **fields)}") from err


def _parameters(cls: type) -> list[str]:
    try:
        return list(inspect.signature(cls.__init__).parameters)[1:]
    except (TypeError, ValueError):
        return []


def _order_that_builds(cls: type, sizes: tuple, book: type, names: tuple) -> tuple | None:
    if len(set(sizes)) != len(sizes):
        return None
    reference = book(*sizes)
    for order in itertools.permutations(sizes):
        if order == tuple(sizes):
            continue
        try:
            with_weights_of(cls(*order), reference, names)
        except Exception:
            continue
        return order
    return None


def jitter(module: torch.nn.Module, seed: int = 5) -> None:
    """Move every parameter a little: LayerNorms start all ones and zeros, which would hide
    one LayerNorm used in the place of another."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))


def gradient_mismatch(mine, reference, args: tuple, names: tuple) -> tuple | None:
    """The first input or parameter whose gradient differs between two modules run on ``args``
    (``names`` name the inputs), with the reader's gradient of it: ``(name, grad)``, or None."""
    grads = []
    for block in (mine, reference):
        inputs = [a.clone().requires_grad_() if a.is_floating_point() else a for a in args]
        block.zero_grad()
        backward((block(*inputs) * randn(*args[0].shape, seed=3)).sum(), "the output")
        found = {n: a.grad for n, a in zip(names, inputs, strict=True) if a.is_floating_point()}
        grads.append(found | {n: p.grad for n, p in block.named_parameters()})
    for name, want in grads[1].items():
        got = grads[0].get(name)
        if want is not None and (got is None or not close(got, want)):
            return name, got
    return None
