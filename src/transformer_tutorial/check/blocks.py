"""Transformer block checks: the encoder and decoder layers, post-norm and pre-norm (chapter 13)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import permutations

import torch
from torch import Tensor

from ..masks import causal_mask
from ..transformer import (
    DecoderLayer,
    EncoderLayer,
    residual,
)
from .engine import Call, check, describe
from .tensors import backward, close, expect_tensor, randn, with_weights_of
from .verdict import POLARITY, Verdict, Wrong, say

MESSAGES = {
    "block-gradient-differs": "the values are right but the gradient with respect to {name} "
    "differs from the reference (norm_first={norm_first}).",
    "decoder-shapes-hint": "here the target has T = {T} positions and the source S = {S}: "
    "cross-attention takes its queries from x (B, T, D) and its keys and values from memory "
    "(B, S, D), masked with src_mask (B, 1, 1, S).",
}

# --- encoder and decoder blocks ----------------------------------------------------------------

_NORM = {
    False: "post-norm LayerNorm(x + Sublayer(x)) (the paper)",
    True: "pre-norm x + Sublayer(LayerNorm(x))",
}
_NO_RESIDUAL = {False: "LayerNorm(Sublayer(x))", True: "Sublayer(LayerNorm(x))"}

# one sub-layer of a block: its name for the reader, the function, its LayerNorm
_Step = tuple[str, Callable[[Tensor], Tensor], torch.nn.Module]


def _layers_of_block(attention_names: tuple[str, ...], norms: int) -> tuple[str, ...]:
    """The dotted names of the linear layers and LayerNorms a block must have."""
    projections = ("q_proj", "k_proj", "v_proj", "out_proj")
    return (
        *(f"{a}.{p}" for a in attention_names for p in projections),
        "feed_forward.linear1",
        "feed_forward.linear2",
        *(f"norm{i}" for i in range(1, norms + 1)),
    )


def _jitter(module: torch.nn.Module, seed: int = 5) -> None:
    """Move every parameter a little: LayerNorms start all ones and zeros, which would hide
    one LayerNorm used in the place of another."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))


def _padding(length: int, real: tuple[int, ...]) -> Tensor:
    """A padding mask ``(B, 1, 1, length)``, B = len(real): sentence b has ``real[b]`` real
    tokens, then padding."""
    return (torch.arange(length) < torch.tensor(real)[:, None])[:, None, None, :]


def _through(x: Tensor, steps: list[_Step], norm_first: bool, how: str = "right") -> Tensor:
    """Run ``x`` through the sub-layers in order, as the book does (``how="right"``) or as one
    typical mistake does: ``"no_residual"``, ``"normed_residual"`` (x = LN(x), then x + sub(x)),
    ``"norm_on_sublayer"`` (x + LN(sub(x))), ``"stale_residual"`` (each residual adds the
    block's input), ``"stale_input"`` (each sub-layer reads the block's input)."""
    block_input = x
    for _, sublayer, norm in steps:
        if how == "right":
            x = residual(x, sublayer, norm, torch.nn.Identity(), norm_first)
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
    return x


def _block_mistakes(steps: list[_Step], x: Tensor, norm_first: bool):
    """``(diagnosis, output)`` for each way of assembling the right sub-layers wrongly."""
    want, other = _NORM[norm_first], _NORM[not norm_first]
    no_residual = _NO_RESIDUAL[norm_first]
    words = f"the residual connection is missing: each sub-layer is {want}, but yours computes "
    yield (
        words + f"{no_residual} (the input x is not added back).",
        partial(_through, x, steps, norm_first, how="no_residual"),
    )
    words = f"the LayerNorm is in the wrong place: norm_first={norm_first} asks for {want}, "
    yield words + f"but yours computes {other}.", partial(_through, x, steps, not norm_first)
    yield (
        "the residual adds the normalised input: yours computes h = LayerNorm(x), then h + "
        f"Sublayer(h); norm_first={norm_first} asks for {want}, with x itself on the residual "
        "path.",
        partial(_through, x, steps, norm_first, how="normed_residual"),
    )
    yield (
        "the LayerNorm is applied to the sub-layer's output before the residual: yours computes "
        f"x + LayerNorm(Sublayer(x)); norm_first={norm_first} asks for {want}.",
        partial(_through, x, steps, norm_first, how="norm_on_sublayer"),
    )
    yield (
        "each residual adds the block's input x, not the output of the sub-layer before: the "
        "sub-layers are chained, each adding back what it read.",
        partial(_through, x, steps, norm_first, how="stale_residual"),
    )
    yield (
        "each sub-layer reads the block's input x, not the output of the sub-layer before: the "
        "sub-layers are chained, the feed-forward network reads what attention made.",
        partial(_through, x, steps, norm_first, how="stale_input"),
    )
    book = ", then ".join(name for name, _, _ in steps)
    for order in list(permutations(range(len(steps))))[1:]:
        for norms_move in (True, False):  # each LayerNorm with its sub-layer, or left in place
            wrong = [(*steps[i][:2], steps[i if norms_move else j][2]) for j, i in enumerate(order)]
            yours = ", then ".join(name for name, _, _ in wrong)
            words = f"the sub-layers run in the wrong order: yours runs {yours}; the book's "
            yield words + f"block runs {book}.", partial(_through, x, wrong, norm_first)


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
    ``watch`` (``should_move``) or leaves it exactly as it was; ``words`` tell the reader
    what it means when the property fails ("{:.2f}" gets the distance moved)."""

    words: str
    i: int
    where: tuple
    watch: tuple
    should_move: bool = False

    def broken_by(self, block, args: tuple) -> str | None:
        moved = _moves(block, args, self.i, self.where, self.watch)
        return None if (moved > 1e-9) == self.should_move else self.words.format(moved)


def _gradient_mismatch(mine, reference, args: tuple, names: tuple) -> str | None:
    """The first input or parameter whose gradient differs between the two blocks."""
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
            return name
    return None


@dataclass
class _Block:
    """What the checker knows about one kind of block."""

    reference: type  # the book's class
    arg_names: tuple[str, ...]  # the arguments of its forward, for the messages
    layers: tuple[str, ...]  # the linear layers and LayerNorms it must have
    steps: Callable[[torch.nn.Module, tuple], list[_Step]]  # its sub-layers, given the arguments
    dependences: list[_Dependence]  # what a right block's output depends on, and what not
    hint: str = ""  # said when the reader's code raises (a message of MESSAGES, filled in)
    # other wrong sub-layers: (diagnosis, the sub-layers with one of them wrong)
    wrong_steps: Callable[[torch.nn.Module, tuple], list[tuple[str, list[_Step]]]] = (
        lambda m, args: []
    )


def _block_diagnosis(block: _Block, got: Tensor, mine, reference, args, norm_first) -> str:
    """The likeliest mistake that turns the reference block's output into ``got``."""
    flipped = tuple(~a if a.dtype == torch.bool else a for a in args)
    expected = _through(args[0], block.steps(reference, flipped), norm_first)
    finite = torch.isfinite(got)  # a flipped mask can leave a query no key: NaN in naive code
    if finite.any() and close(got[finite], expected[finite]):
        return f"mask polarity: you masked the keys that may be seen -- {POLARITY}."
    for words, variant in _block_mistakes(block.steps(reference, args), args[0], norm_first):
        if close(got, variant()):
            return words
    for words, steps in block.wrong_steps(reference, args):
        if close(got, _through(args[0], steps, norm_first)):
            return words
    for dependence in block.dependences:
        words = dependence.broken_by(mine, args)
        if words:
            return words
    worst = (got - reference(*args)).abs().amax(-1).nan_to_num(math.inf)  # (B, T)
    b, t = divmod(int(worst.argmax()), worst.shape[1])
    shapes = ", ".join(f"{n} {tuple(a.shape)}" for n, a in zip(block.arg_names, args, strict=True))
    return (
        f"the output differs from the book's block with norm_first={norm_first}, most at "
        f"sentence {b}, position {t} ({shapes})."
    )


BUILD = "cls(d_model, num_heads, d_ff, dropout=0.0, norm_first=False)"


def _check_block(cls: type, block: _Block, args: tuple) -> None:
    """Build the reader's block and the book's with the same weights, post-norm then pre-norm,
    and compare values and gradients; raise ``Wrong`` with a diagnosis at the first miss."""
    D, H, F = args[0].shape[-1], 4, 32
    for norm_first in (False, True):
        torch.manual_seed(0)
        mine = cls(D, H, F, dropout=0.0, norm_first=norm_first)
        reference = block.reference(D, H, F, dropout=0.0, norm_first=norm_first).double().eval()
        with_weights_of(mine, reference.float(), block.layers)  # the layers are there
        mine, reference = mine.double().eval(), reference.double()
        _jitter(mine)
        with_weights_of(mine, reference, block.layers)
        with torch.no_grad():
            try:
                result = mine(*args)
            except Exception as err:  # a shape mistake often shows as an error: say more
                message = describe(err, Call("", "layer(...)", BUILD), cls)
                if "bug in the checker" in message:
                    raise
                if block.hint:
                    message += " -- " + block.hint
                raise Wrong(message) from err
            got = expect_tensor(result, "the output", args[0].shape)
            if not close(got, reference(*args)):
                raise Wrong(_block_diagnosis(block, got, mine, reference, args, norm_first))
        name = _gradient_mismatch(mine, reference, args, block.arg_names)
        if name is not None:
            raise Wrong.differs(MESSAGES, "block-gradient-differs", name=name,
                                norm_first=norm_first)  # fmt: skip


def _attend(mha: torch.nn.Module, key: Tensor | None, mask: Tensor | None):
    """A sub-layer that attends from its input to ``key`` (``None``: to itself)."""
    return lambda h: mha(h, h if key is None else key, h if key is None else key, mask=mask)[0]


def _encoder_steps(m: torch.nn.Module, args: tuple) -> list[_Step]:
    _, src_mask = args
    return [
        ("self-attention", _attend(m.self_attn, None, src_mask), m.norm1),
        ("the feed-forward network", m.feed_forward, m.norm2),
    ]


def _decoder_steps(m: torch.nn.Module, args: tuple) -> list[_Step]:
    _, memory, tgt_mask, src_mask = args
    return [
        ("self-attention", _attend(m.self_attn, None, tgt_mask), m.norm1),
        ("cross-attention", _attend(m.cross_attn, memory, src_mask), m.norm2),
        ("the feed-forward network", m.feed_forward, m.norm3),
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
            _Dependence(
                "the padding mask is not used: changing sentence 1 at its padding "
                "positions 3..4 moves the outputs at its real positions 0..2 (by up to "
                "{:.2f}). Pass src_mask (B, 1, 1, S), True = a real token, to "
                "self-attention.",
                i=0,
                where=(1, slice(3, None)),
                watch=(1, slice(0, 3)),
            ),
        ],
    )
    _check_block(cls, block, (randn(B, S, D), _padding(S, real)))
    return (
        "self-attention, feed-forward, residuals, post-norm and pre-norm, the padding "
        "mask and the gradients are right."
    )


_DECODER_DEPENDENCES = [  # what the decoder's output must (not) depend on
    _Dependence(
        "the decoder sees the future: changing the target at positions 2..3 moves "
        "the outputs at positions 0..1 (by up to {:.2f}). Pass tgt_mask (causal: "
        "True on and below the diagonal) to self-attention.",
        i=0,
        where=(0, slice(2, None)),
        watch=(0, slice(0, 2)),
    ),
    _Dependence(
        "the output does not depend on memory: cross-attention takes its queries "
        "from the decoder and its keys and values from memory, the encoder's "
        "output (B, S, D).",
        i=1,
        where=(0,),
        watch=(0,),
        should_move=True,
    ),
    _Dependence(
        "the source padding mask is not used: changing the memory at sentence 1's "
        "padding positions 3..4 moves its outputs (by up to {:.2f}). Pass src_mask "
        "(B, 1, 1, S) to cross-attention.",
        i=1,
        where=(1, slice(3, None)),
        watch=(1,),
    ),
]


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
        wrong_steps=lambda m, args: [
            (
                "cross-attention runs through self_attn's weights: it has its own module, "
                "cross_attn, with its own projections.",
                [
                    _decoder_steps(m, args)[0],
                    ("cross-attention", _attend(m.self_attn, args[1], args[3]), m.norm2),
                    _decoder_steps(m, args)[2],
                ],
            ),
        ],
        hint=say(MESSAGES, "decoder-shapes-hint", T=T, S=S),
    )
    args = (randn(B, T, D), randn(B, S, D, seed=1), tgt_mask, _padding(S, (5, 3)))
    _check_block(cls, block, args)
    return (
        "masked self-attention, cross-attention to the memory, feed-forward, residuals, "
        "post-norm and pre-norm, both masks and the gradients are right."
    )
