"""Where a block first goes wrong: what each of its parts is given, beside the book's block.

Hooks on the parts both blocks have (``self_attn``, ``cross_attn``, ``feed_forward``,
``norm1`` ...) record what each is called with. The first part, in the book's order, that is
given something else than in the book's block is where the reader's block goes wrong; what it
is given instead is named when it is one of the book's own tensors (the block's input, a part's
output, a residual sum), and a mask when it is a known one (none, the causal mask, the right one
transposed or inverted).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..masks import causal_mask
from .block_words import MESSAGES, MISTAKES
from .tensors import close
from .verdict import Wrong, say

PARTS = ("self_attn", "cross_attn", "feed_forward", "norm1", "norm2", "norm3")


def _part(name: str) -> str:
    """A part as the messages call it: "the self-attention", ..., "norm1"."""
    return name if name.startswith("norm") else say(MESSAGES, f"trace-part-{name}")


SLOTS = ("query", "key", "value")  # an attention's inputs, in the order of its call


def _inputs(name: str, args: tuple, kwargs: dict) -> dict[str, object]:
    """What part ``name`` was called with: an attention's query, key, value and mask, or the
    one tensor a feed-forward network or a LayerNorm reads."""
    if not name.endswith("_attn"):
        return {"input": args[0] if args else next(iter(kwargs.values()), None)}
    given = dict(zip((*SLOTS, "mask"), args, strict=False))  # as many as were passed
    for slot in (*SLOTS, "mask"):
        given.setdefault(slot, kwargs.get(slot))
    return given


def _output(result: object) -> object:
    return result[0] if isinstance(result, (tuple, list)) else result


def trace(module: torch.nn.Module, run: Callable[[], object]) -> tuple[list[str], dict, dict]:
    """``run()``, which calls ``module``'s parts; the parts in the order of their first call,
    what each was first given, and what each first returned."""
    order: list[str] = []
    given: dict[str, dict] = {}
    returned: dict[str, object] = {}
    hooks = []
    for name in PARTS:
        part = getattr(module, name, None)
        if not isinstance(part, torch.nn.Module):
            continue

        def before(_, a, kw, name=name):
            if name not in given:
                order.append(name)
                given[name] = _inputs(name, a, kw)

        def after(_, a, kw, result, name=name):
            returned.setdefault(name, _output(result))

        hooks.append(part.register_forward_pre_hook(before, with_kwargs=True))
        hooks.append(part.register_forward_hook(after, with_kwargs=True))
    try:
        with torch.no_grad():
            run()
    finally:
        for hook in hooks:
            hook.remove()
    return order, given, returned


def _known_tensors(args: tuple, arg_names: tuple, order: list, returned: dict) -> list:
    """The book's tensors by name: the block's arguments, each part's output, and the residual
    sums a block could form, each sub-layer's output added to a stream before it."""
    known = [(n, a) for n, a in zip(arg_names, args, strict=True) if a is not None]
    known[0] = (say(MESSAGES, "trace-block-input", name=arg_names[0]), args[0])
    streams = [(arg_names[0], args[0])]  # what a residual may add to: x, a norm's output, a sum
    for n in order:
        out = returned.get(n)
        if not isinstance(out, Tensor):
            continue
        output = say(MESSAGES, "trace-output", part=_part(n))
        known.append((output, out))
        if n.startswith("norm"):
            streams.append((output, out))
            continue
        sums = [(f"{name} + {output}", t + out) for name, t in streams if t.shape == out.shape]
        known += sums
        streams += sums
    return known


def _same(got: object, right: Tensor) -> bool:
    return isinstance(got, Tensor) and got.shape == right.shape and close(got, right)


def _named(t: object, known: list) -> str | None:
    return next((name for name, k in known if _same(t, k)), None)


def _visible(mask: object, shape: torch.Size) -> Tensor | None:
    """Which keys each query may see, ``shape`` = (B, H or 1, T_q, T_k); None if unreadable."""
    if mask is None:
        return torch.ones(shape, dtype=torch.bool)
    try:
        return torch.broadcast_to(torch.as_tensor(mask).bool(), shape)
    except (RuntimeError, TypeError):
        return None


def _mask_words(mine: object, right: object, query: Tensor, key: Tensor) -> str | None:
    """How the mask an attention was given differs from the book's, or None if it does not."""
    shape = torch.Size((query.shape[0], 1, query.shape[1], key.shape[1]))
    got, want = _visible(mine, shape), _visible(right, shape)
    if got is None or want is None or torch.equal(got, want):
        return None
    T_q, T_k = shape[-2:]
    if mine is None:
        return say(MESSAGES, "trace-mask-none")
    if torch.equal(got, ~want):
        return say(MESSAGES, "trace-mask-inverted")
    if T_q == T_k and torch.equal(got, want.transpose(-2, -1)):
        return say(MESSAGES, "trace-mask-transposed")
    if T_q == T_k and torch.equal(got, want & causal_mask(T_q)):
        return say(MESSAGES, "trace-mask-causal")
    if (empty := int((~got.any(-1) & want.any(-1)).sum())) > 0:
        return say(MESSAGES, "trace-mask-empty-rows", n=empty)
    for key, extra in (("more", got & ~want), ("less", want & ~got)):
        if torch.equal(got & want, want if key == "more" else got):  # one holds the other
            b, _, q, k = (int(i) for i in extra.nonzero()[0])
            return say(MESSAGES, f"trace-mask-sees-{key}", n=int(extra.sum()), b=b, q=q, k=k)
    return say(MESSAGES, "trace-mask-other")


def first_difference(run, book: Callable[[], object], arg_names: tuple) -> Wrong | None:
    """The first part of the book's block (``run.reference``, run by ``book()`` one part at a
    time) that the reader's block (``run.mine``) calls differently on ``run.args``, or not at
    all, named with what it is given instead; None when every part gets what the book's does
    (or the blocks cannot be traced)."""
    mine, reference, args, norm_first = run.mine, run.reference, run.args, run.norm_first
    try:
        _, mine_given, mine_returned = trace(mine, lambda: mine(*args))
        order, given, returned = trace(reference, book)
    except Exception:  # the reader's block fails under hooks: leave it to the other probes
        return None
    known = _known_tensors(args, arg_names, order, returned)
    fields = {"norm_first": norm_first}
    for name in order:
        if name not in mine_given:
            return Wrong.named(MISTAKES, "block-part-not-called", part=_part(name), **fields)
        for slot, right in given[name].items():
            got = mine_given[name].get(slot)
            if slot == "mask":
                what = _mask_words(got, right, given[name]["query"], given[name]["key"])
                if what is not None:
                    return Wrong.named(MISTAKES, "block-part-mask", part=_part(name), what=what,
                                       **fields)  # fmt: skip
                continue
            if not isinstance(right, Tensor) or got is None:
                continue  # not a tensor of the book's, or passed in a way not read here
            if _same(got, right):
                continue
            where = (
                ""
                if slot == "input"
                else say(MESSAGES, "trace-slot", slot=say(MESSAGES, f"trace-{slot}"))
            )
            right_name = _named(right, known) or say(MESSAGES, "trace-unnamed")
            words = {"part": _part(name), "where": where, "right": right_name, **fields}
            if (yours := _named(got, known)) is not None:
                return Wrong.named(MISTAKES, "block-part-reads", yours=yours, **words)
            return Wrong.differs(MESSAGES, "block-part-differs", **words)
        got, right = mine_returned.get(name), returned.get(name)
        if isinstance(right, Tensor) and not _same(got, right):
            return Wrong.named(MISTAKES, "block-part-inside", part=_part(name), **fields)
    return _after_last_part(run.got, run.right(args), fields)


def _after_last_part(got: object, want: Tensor, fields: dict) -> Wrong | None:
    """Every part is right, and the block's output is the book's passed through one more step:
    a ReLU, or a LayerNorm with weights of its own (a scale and a shift per feature, fitted)."""
    if not isinstance(got, Tensor) or got.shape != want.shape or not got.is_floating_point():
        return None
    got = got.to(want.dtype)
    normed = torch.nn.functional.layer_norm(want, want.shape[-1:]).flatten(0, -2)  # (N, D)
    design = torch.stack([normed, torch.ones_like(normed)], -1).transpose(0, 1)  # (D, N, 2)
    fit = torch.linalg.lstsq(design, got.flatten(0, -2).T.unsqueeze(-1)).solution  # (D, 2, 1)
    after = {"block-output-relu": torch.relu(want),
             "block-output-normed": (design @ fit).squeeze(-1).T.reshape(want.shape)}  # fmt: skip
    found = [key for key, wrong in after.items() if close(got, wrong)]
    return Wrong.named(MISTAKES, found[0], **fields) if len(found) == 1 else None
