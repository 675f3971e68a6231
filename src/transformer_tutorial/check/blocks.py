"""Transformer block checks: the encoder and decoder layers, post-norm and pre-norm (chapter 13)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import permutations

import torch
from torch import Tensor

from ..masks import causal_mask
from ..transformer import DecoderLayer, EncoderLayer, residual
from .block_trace import first_difference
from .block_words import MESSAGES, MISTAKES
from .diagnoses import expect_same_twice, gradient_diagnosis
from .engine import MESSAGES as ENGINE_MESSAGES
from .engine import Call, check, describe
from .tensors import NAMES as TENSOR_NAMES
from .tensors import close, expect_tensor, gradient_mismatch, jitter, randn, with_weights_of
from .verdict import POLARITY, Verdict, Wrong, say

# the blocks' sentences are in block_words.py

# one sub-layer of a block: its name (a key of MESSAGES), the function, its LayerNorm
_Step = tuple[str, Callable[[Tensor], Tensor], torch.nn.Module]


def _norm_words(norm_first: bool) -> str:
    return say(MESSAGES, "pre-norm" if norm_first else "post-norm")


def _no_residual_words(norm_first: bool) -> str:
    return say(MESSAGES, "pre-norm-no-residual" if norm_first else "post-norm-no-residual")


def _layers_of_block(attention_names: tuple[str, ...], norms: int) -> tuple[str, ...]:
    """The dotted names of the linear layers and LayerNorms a block must have."""
    projections = ("q_proj", "k_proj", "v_proj", "out_proj")
    return (
        *(f"{a}.{p}" for a in attention_names for p in projections),
        "feed_forward.linear1",
        "feed_forward.linear2",
        *(f"norm{i}" for i in range(1, norms + 1)),
    )


def _padding(length: int, real: tuple[int, ...]) -> Tensor:
    """A padding mask ``(B, 1, 1, length)``, B = len(real): sentence b has ``real[b]`` real
    tokens, then padding."""
    return (torch.arange(length) < torch.tensor(real)[:, None])[:, None, None, :]


def _through(x: Tensor, steps: list[_Step], norm_first: bool, how: str | list[str] = "right"):
    """Run ``x`` through the sub-layers in order, as the book does (``how="right"``) or as one
    typical mistake does, for every sub-layer or (a list) each its own way: ``"no_residual"``,
    ``"normed_residual"`` (x = LN(x), then x + sub(x)), ``"norm_on_sublayer"`` (x + LN(sub(x))),
    ``"stale_residual"`` (the residual adds the block's input), ``"stale_input"`` (the
    sub-layer reads the block's input), ``"normed_twice"`` (LN(x + sub(LN(x)))), ``"raw_query"``
    (pre-norm attention asked by the unnormalised x), ``"residual_from_before"`` (the residual
    adds the previous sub-layer's input)."""
    hows = [how] * len(steps) if isinstance(how, str) else how
    block_input = last_input = x
    for (_, sublayer, norm), how in zip(steps, hows, strict=True):
        x_in = x  # this sub-layer's input; ``last_input``: the one before's
        if how == "right":
            x = residual(x, sublayer, norm, torch.nn.Identity(), norm_first)
        elif how == "normed_twice":  # pre-norm and post-norm at once
            x = norm(x + sublayer(norm(x)))
        elif how == "raw_query":  # pre-norm attention whose query is the unnormalised x
            x = x + sublayer(norm(x), query=x)
        elif how == "residual_from_before":  # the residual adds the previous sub-layer's input
            added = last_input
            x = added + sublayer(norm(x)) if norm_first else norm(added + sublayer(x))
        elif how == "no_residual":
            x = sublayer(norm(x)) if norm_first else norm(sublayer(x))
        elif how == "normed_residual":
            h = norm(x)
            x = h + sublayer(h)
        elif how == "norm_on_sublayer":
            x = x + norm(sublayer(x))
        else:
            added, read = (block_input, x) if how == "stale_residual" else (x, block_input)
            x = added + sublayer(norm(read)) if norm_first else norm(added + sublayer(read))
        last_input = x_in
    return x


@dataclass
class _Run:
    """One build of the reader's block beside the book's, with the same weights."""

    norm_first: bool
    mine: torch.nn.Module
    reference: torch.nn.Module
    got: Tensor  # the reader's output
    args: tuple  # what both were called with

    def right(self, args: tuple | None = None) -> Tensor:
        with torch.no_grad():
            return self.reference(*(self.args if args is None else args))


# a candidate mistake: its id, its message's fields, what it computes in a run
_Candidate = tuple[str, dict, Callable[[_Run], Tensor]]


def _assembly_mistakes(block: _Block, args: tuple, reference: torch.nn.Module):
    """Every way of assembling the right sub-layers wrongly, as candidates."""
    x = args[0]

    def steps(run: _Run, a: tuple = args) -> list[_Step]:
        return block.steps(run.reference, a)

    yield "block-no-residual", {}, lambda r: _through(x, steps(r), r.norm_first, "no_residual")
    for nf in (False, True):
        yield (
            "block-norm-first-ignored",
            {"yours": _norm_words(nf)},
            lambda r, nf=nf: _through(x, steps(r), nf),
        )
    yield "block-norm-first-inverted", {}, lambda r: _through(x, steps(r), not r.norm_first)
    yield (  # pre-norm only: post-norm has no normalised input to put on the residual path
        "block-normed-residual",
        {},
        lambda r: _through(
            x, steps(r), r.norm_first, "normed_residual" if r.norm_first else "right"
        ),
    )
    yield (
        "block-normed-twice",
        {"sublayer": say(MESSAGES, "every-sublayer")},
        lambda r: _through(x, steps(r), r.norm_first, "normed_twice"),
    )
    for how in ("norm_on_sublayer", "stale_residual", "stale_input"):
        key = "block-" + how.replace("_", "-")
        yield key, {}, lambda r, how=how: _through(x, steps(r), r.norm_first, how)
    yield from _sublayer_mistakes(steps, [name for name, _, _ in block.steps(reference, args)], x)
    masks = [i for i, a in enumerate(args) if a.dtype == torch.bool]
    for flipped in [masks] + [[i] for i in masks] * (len(masks) > 1):
        changed = tuple(~a if i in flipped else a for i, a in enumerate(args))
        yield (
            "block-mask-polarity",
            {"polarity": POLARITY},
            lambda r, changed=changed: _through(x, steps(r, changed), r.norm_first),
        )
    yield from block.wrong_steps(args)


def _sublayer_mistakes(steps: Callable, names: list[str], x: Tensor):
    """One sub-layer assembled wrongly (its residual, its input, its LayerNorm), or the
    sub-layers in another order, as candidates."""
    n = len(names)
    for i in range(n):
        one = lambda how, i=i: ["right"] * i + [how] + ["right"] * (n - i - 1)  # noqa: E731
        fields = {"sublayer": say(MESSAGES, names[i])}
        yield (
            "block-no-residual-around",
            fields,
            lambda r, one=one: _through(x, steps(r), r.norm_first, one("no_residual")),
        )
        yield (  # pre-norm only: post-norm has no LayerNorm before the sub-layer
            "block-normed-twice",
            fields,
            lambda r, one=one: _through(x, steps(r), r.norm_first, one("normed_twice")),
        )
        yield (
            "block-query-unnormalised",
            fields,
            lambda r, one=one, i=i: _through(
                x, steps(r), r.norm_first,
                one("raw_query" if r.norm_first and _attends(steps(r)[i]) else "right"),
            ),
        )  # fmt: skip
        if i > 0:
            yield (
                "block-residual-from-before",
                fields | {"previous": say(MESSAGES, names[i - 1])},
                lambda r, one=one: _through(x, steps(r), r.norm_first, one("residual_from_before")),
            )
            yield (
                "block-reads-block-input",
                fields | {"previous": say(MESSAGES, names[i - 1])},
                lambda r, one=one: _through(x, steps(r), r.norm_first, one("stale_input")),
            )
        for j in range(n):
            if j != i:
                yield (
                    "block-norm-reused",
                    fields
                    | {
                        "norm": f"norm{j + 1}",
                        "owner": say(MESSAGES, names[j]),
                        "norms": ", ".join(f"norm{k + 1}" for k in range(n)),
                    },
                    lambda r, i=i, j=j: _through(x, _swap_norm(steps(r), i, j), r.norm_first),
                )
    yield from _arrangement_mistakes(steps, names, x)


def _arrangement_mistakes(steps: Callable, names: list[str], x: Tensor):
    """The right sub-layers with each other's LayerNorms, or in another order, as candidates."""
    n = len(names)
    book = say(MESSAGES, "then").join(say(MESSAGES, name) for name in names)
    own = ", ".join(f"{say(MESSAGES, names[k])} norm{k + 1}" for k in range(n))
    for perm in list(permutations(range(n)))[1:]:  # every sub-layer with another's LayerNorm
        if sorted(perm) == list(perm):
            continue
        yours = ", ".join(f"{say(MESSAGES, names[k])} norm{perm[k] + 1}" for k in range(n))
        yield (
            "block-norms-swapped",
            {"yours": yours, "own": own},
            lambda r, perm=perm: _through(
                x, [(*t[:2], steps(r)[perm[k]][2]) for k, t in enumerate(steps(r))], r.norm_first
            ),
        )
    for order in list(permutations(range(n)))[1:]:
        for norms_move in (True, False):  # each LayerNorm with its sub-layer, or left in place

            def wrong(r, order=order, norms_move=norms_move):
                s = steps(r)
                return [(*s[i][:2], s[i if norms_move else j][2]) for j, i in enumerate(order)]

            yours = say(MESSAGES, "then").join(say(MESSAGES, names[i]) for i in order)
            yield (
                "block-order",
                {"yours": yours, "book": book},
                lambda r, wrong=wrong: _through(x, wrong(r), r.norm_first),
            )


def _one_branch_too(candidates):
    """Each candidate, and then each as a mistake in one branch of ``if self.norm_first`` only
    (the other branch right): the reader's two branches are two pieces of code."""
    found = list(candidates)
    yield from found
    for branch in (False, True):
        for key, fields, compute in found:
            yield (
                key,
                fields,
                lambda r, c=compute, b=branch: c(r) if r.norm_first == b else r.right(r.args),
            )


def _attends(step: _Step) -> bool:
    """Is this sub-layer an attention, which can be asked by another query?"""
    return getattr(step[1], "attends", False)


def _swap_norm(steps: list[_Step], i: int, j: int) -> list[_Step]:
    """The sub-layers with sub-layer ``i`` normalised by ``j``'s LayerNorm."""
    return [(*s[:2], steps[j][2] if k == i else s[2]) for k, s in enumerate(steps)]


def _reproduces(compute: Callable[[_Run], Tensor], runs: list[_Run]) -> bool:
    """Does a candidate give the reader's output in every run (at its finite values: a naive
    flipped mask leaves NaN where a query sees no key)?"""
    for run in runs:
        with torch.no_grad():
            want = compute(run)
        finite = torch.isfinite(run.got)
        if not finite.any() or not close(run.got[finite], want[finite]):
            return False
    return True


def _moves(block, args: tuple, i: int, where: tuple, watch: tuple) -> float:
    """How far ``block(*args)[watch]`` moves when argument ``i`` changes at ``where``."""
    changed = list(args)
    changed[i] = args[i].clone()
    changed[i][where] += 1.0 + randn(*changed[i][where].shape, seed=7)
    with torch.no_grad():
        return float((block(*changed)[watch] - block(*args)[watch]).abs().max())


@dataclass
class _Dependence:
    """A property of a right block: changing argument ``i`` at ``where`` moves the output at
    ``watch`` (``should_move``) or leaves it exactly as it was; ``mistake`` names what it
    means when the property fails (its message gets the distance moved)."""

    mistake: str
    i: int
    where: tuple
    watch: tuple
    should_move: bool = False
    drops: int | None = None  # named only if the book's block without this argument agrees

    def broken_by(self, block, args: tuple) -> Wrong | None:
        moved = _moves(block, args, self.i, self.where, self.watch)
        if (moved > 1e-9) == self.should_move:
            return None
        return Wrong.named(MISTAKES, self.mistake, moved=moved)


@dataclass
class _Block:
    """What the checker knows about one kind of block."""

    reference: type  # the book's class
    arg_names: tuple[str, ...]  # the arguments of its forward, for the messages
    layers: tuple[str, ...]  # the linear layers and LayerNorms it must have
    steps: Callable[[torch.nn.Module, tuple], list[_Step]]  # its sub-layers, given the arguments
    dependences: list[_Dependence]  # what a right block's output depends on, and what not
    hint: str = ""  # said when the reader's code raises (a message of MESSAGES, filled in)
    # other wrong sub-layers, as candidates
    wrong_steps: Callable[[tuple], list[_Candidate]] = lambda args: []


def _diagnosis(block: _Block, runs: list[_Run], args: tuple) -> Wrong:
    """The mistake that turns the book's block into the reader's in *every* run, post-norm and
    pre-norm alike (candidates that coincide there are one mistake said two ways: the first is
    named); else what the reader's output depends on that it
    should not; else where it differs."""
    failed = next(r for r in runs if not close(r.got, r.right(args)))
    for key, fields, compute in _one_branch_too(_assembly_mistakes(block, args, failed.reference)):
        if not _reproduces(compute, runs):
            continue
        norm_first = failed.norm_first
        return Wrong.named(MISTAKES, key, **fields, norm_first=norm_first,
                           want=_norm_words(norm_first), other=_norm_words(not norm_first),
                           no_residual=_no_residual_words(norm_first))  # fmt: skip
    book = lambda: _through(args[0], block.steps(failed.reference, args), failed.norm_first)  # noqa: E731
    for dependence in block.dependences:
        wrong = dependence.broken_by(failed.mine, args)
        if wrong and dependence.drops is not None:
            dropped = args[: dependence.drops] + (None,) + args[dependence.drops + 1 :]
            if not close(failed.got, failed.right(dropped)):  # the symptom: where it comes from?
                symptom = Wrong.differs(MESSAGES, f"{dependence.mistake}-symptom")
                wrong = first_difference(failed, book, block.arg_names) or symptom
        if wrong:
            return wrong
    if traced := first_difference(failed, book, block.arg_names):
        return traced
    worst = (failed.got - failed.right(args)).abs().amax(-1).nan_to_num(math.inf)  # (B, T)
    b, t = divmod(int(worst.argmax()), worst.shape[1])
    shapes = ", ".join(f"{n} {tuple(a.shape)}" for n, a in zip(block.arg_names, args, strict=True))
    return Wrong.differs(MESSAGES, "block-differs", norm_first=failed.norm_first, b=b, t=t,
                         shapes=shapes)  # fmt: skip


BUILD = "cls(d_model, num_heads, d_ff, dropout=0.0, norm_first=False)"


def _build(cls: type, block: _Block, args: tuple, norm_first: bool) -> _Run:
    """The reader's block and the book's, with the same (jittered) weights, run on ``args``."""
    D, H, F = args[0].shape[-1], 4, 32
    torch.manual_seed(0)
    mine = cls(D, H, F, dropout=0.0, norm_first=norm_first)
    reference = block.reference(D, H, F, dropout=0.0, norm_first=norm_first).double().eval()
    with_weights_of(mine, reference.float(), block.layers)  # the layers are there
    mine, reference = mine.double().eval(), reference.double()
    jitter(mine)
    with_weights_of(mine, reference, block.layers)
    with torch.no_grad():
        try:
            given = {"x" if i == 0 else f"argument {i + 1}": a for i, a in enumerate(args)}
            result = expect_same_twice(lambda: mine(*args), say(MESSAGES, "your-block"), given)
        except Wrong:
            raise
        except Exception as err:  # a shape mistake often shows as an error: say more
            message = describe(err, Call("", "layer(...)", BUILD), cls)
            if "bug in the checker" in message:
                raise
            if block.hint and any(w in str(err).lower() for w in ("size", "shape", "dimension")):
                message = say(ENGINE_MESSAGES, "with-hint", message=message, hint=block.hint)
            raise Wrong(message) from err
    got = expect_tensor(result, TENSOR_NAMES["output"], args[0].shape)
    with torch.no_grad():  # built with dropout=0.0, training mode must change nothing
        trained = mine.train()(*args)
    mine.eval()
    if isinstance(trained, Tensor) and not torch.equal(trained.nan_to_num(), got.nan_to_num()):
        raise Wrong.named(MISTAKES, "block-dropout-fixed")
    return _Run(norm_first, mine, reference, got, args)


def _check_block(cls: type, block: _Block, args: tuple) -> None:
    """Build the reader's block and the book's, post-norm and pre-norm, and compare values,
    then gradients; raise ``Wrong`` with a diagnosis that both builds confirm."""
    runs = [_build(cls, block, args, norm_first) for norm_first in (False, True)]
    if any(not close(run.got, run.right(args)) for run in runs):
        raise _diagnosis(block, runs, args)
    for run in runs:
        found = gradient_mismatch(run.mine, run.reference, args, block.arg_names)
        if found is not None:
            wrong = gradient_diagnosis(run.mine, run.reference, *found)
            raise wrong or Wrong.differs(MESSAGES, "block-gradient-differs", name=found[0],
                                         norm_first=run.norm_first)  # fmt: skip


def _attend(mha: torch.nn.Module, key: Tensor | None, mask: Tensor | None):
    """A sub-layer that attends from its input to ``key`` (``None``: to itself)."""

    def sublayer(h: Tensor, query: Tensor | None = None) -> Tensor:
        kv = h if key is None else key
        return mha(h if query is None else query, kv, kv, mask=mask)[0]

    sublayer.attends = True  # type: ignore[attr-defined]
    return sublayer


def _encoder_steps(m: torch.nn.Module, args: tuple) -> list[_Step]:
    _, src_mask = args
    return [
        ("self-attention", _attend(m.self_attn, None, src_mask), m.norm1),
        ("feed-forward", m.feed_forward, m.norm2),
    ]


def _decoder_steps(m: torch.nn.Module, args: tuple, cross=None) -> list[_Step]:
    """The decoder's sub-layers; ``cross`` replaces cross-attention's function."""
    _, memory, tgt_mask, src_mask = args
    return [
        ("self-attention", _attend(m.self_attn, None, tgt_mask), m.norm1),
        ("cross-attention", cross or _attend(m.cross_attn, memory, src_mask), m.norm2),
        ("feed-forward", m.feed_forward, m.norm3),
    ]


@check("encoder layer", build=BUILD, call="layer(x, src_mask)")
def check_encoder_layer(cls: type) -> Verdict:
    """``cls(d_model, num_heads, d_ff, dropout=0.0, norm_first=False)`` with ``self_attn``
    (``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``), ``feed_forward`` (``linear1``,
    ``linear2``), ``norm1``, ``norm2``; ``layer(x, src_mask)``: self-attention, then the
    feed-forward network, each with its residual connection and LayerNorm."""
    B, S, D = 2, 5, 16
    real = (4, 3)  # sentence 1 ends in two padding positions, 3 and 4
    block = _Block(
        reference=EncoderLayer,
        arg_names=("x", "src_mask"),
        layers=_layers_of_block(("self_attn",), norms=2),
        steps=_encoder_steps,
        dependences=[
            _Dependence("encoder-no-padding-mask", 0, (1, slice(3, None)), (1, slice(3)), drops=1),
        ],
    )
    _check_block(cls, block, (randn(B, S, D), _padding(S, real)))
    return (
        "self-attention, feed-forward, residuals, post-norm and pre-norm, the padding "
        "mask and the gradients are right."
    )


_DECODER_DEPENDENCES = [  # what the decoder's output must (not) depend on, the likeliest first
    _Dependence("decoder-ignores-memory", i=1, where=(0,), watch=(0,), should_move=True),
    _Dependence("decoder-no-source-mask", i=1, where=(1, slice(3, None)), watch=(1,), drops=3),
    _Dependence("decoder-sees-future", 0, (0, slice(2, None)), (0, slice(0, 2)), drops=2),
]


def _decoder_wrong_steps(args: tuple) -> list[_Candidate]:
    """Cross-attention built from the wrong parts, as candidates."""
    x, memory, tgt_mask, src_mask = args

    def through(cross: Callable[[torch.nn.Module], Callable], pre_norm_only: bool = False):
        def compute(r: _Run) -> Tensor:
            if pre_norm_only and not r.norm_first:
                return r.right(args)
            return _through(x, _decoder_steps(r.reference, args, cross(r.reference)), r.norm_first)

        return compute

    found: list[_Candidate] = [
        ("decoder-cross-through-self-attn", {},
         through(lambda m: _attend(m.self_attn, memory, src_mask))),
        ("decoder-memory-normalised", {"norm": "norm2"},
         through(lambda m: _attend(m.cross_attn, m.norm2(memory), src_mask), pre_norm_only=True)),
    ]  # fmt: skip
    for mask in (None, tgt_mask):
        found.append(("decoder-cross-reads-target", {},
                      through(lambda m, mask=mask: _attend(m.cross_attn, None, mask))))  # fmt: skip
    return found


@check("decoder layer", build=BUILD, call="layer(x, memory, tgt_mask, src_mask)")
def check_decoder_layer(cls: type) -> Verdict:
    """``cls(d_model, num_heads, d_ff, dropout=0.0, norm_first=False)`` with ``self_attn``,
    ``cross_attn`` (each with ``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``),
    ``feed_forward`` (``linear1``, ``linear2``), ``norm1``, ``norm2``, ``norm3``;
    ``layer(x, memory, tgt_mask, src_mask)``: masked self-attention, cross-attention to the
    memory, then the feed-forward network, each with its residual connection and LayerNorm."""
    B, T, S, D = 2, 4, 5, 16
    tgt_mask = _padding(T, (4, 3)) & causal_mask(T)  # (B, 1, T, T)
    block = _Block(
        reference=DecoderLayer,
        arg_names=("x", "memory", "tgt_mask", "src_mask"),
        layers=_layers_of_block(("self_attn", "cross_attn"), norms=3),
        steps=_decoder_steps,
        dependences=_DECODER_DEPENDENCES,
        wrong_steps=_decoder_wrong_steps,
        hint=say(MESSAGES, "decoder-shapes-hint", T=T, S=S),
    )
    args = (randn(B, T, D), randn(B, S, D, seed=1), tgt_mask, _padding(S, (5, 3)))
    _check_block(cls, block, args)
    return (
        "masked self-attention, cross-attention to the memory, feed-forward, residuals, "
        "post-norm and pre-norm, both masks and the gradients are right."
    )
