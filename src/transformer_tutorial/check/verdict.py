"""The verdict machinery every check shares: run the reader's code, catch what it raises,
compare tensors, and print one verdict in the book's terms."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

POLARITY = "in this book a mask is True where a query *may attend*"


def wrap_verdict(text: str, width: int = 100) -> str:
    """Fold each line longer than ``width`` at spaces, so a verdict fits the book's text column."""
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
        else:
            lines += textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False)
    return "\n".join(lines)


@dataclass
class Verdict:
    """The outcome of one check: ``ok``, the block's name, and what to say to the reader."""

    ok: bool
    block: str
    message: str

    def __str__(self) -> str:
        return wrap_verdict(f"{'✓' if self.ok else '✗'} {self.block}: {self.message}")

    def __bool__(self) -> bool:
        return self.ok


class Wrong(Exception):
    """Raised inside a check with the message for the reader."""


def _run(block: str, probes: Callable[[], str]) -> Verdict:
    try:
        verdict = Verdict(True, block, probes())
    except Wrong as wrong:
        verdict = Verdict(False, block, str(wrong))
    except NotImplementedError:  # the skeleton of a "Your turn" cell, not yet filled in
        verdict = Verdict(
            False,
            block,
            "not written yet -- replace `raise NotImplementedError` with your code and run the "
            "cell again.",
        )
    except Exception as err:  # the reader's code raised: say where, in their terms
        verdict = Verdict(False, block, f"your code raised {type(err).__name__}: {err}")
    print(verdict)
    return verdict


def _close(a: Tensor, b: Tensor, tol: float = 1e-5) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=tol, rtol=tol, equal_nan=False))


def _tensor(result: object, what: str, shape: tuple) -> Tensor:
    if not isinstance(result, Tensor):
        raise Wrong(f"{what} should be a tensor of shape {shape}, got {type(result).__name__}.")
    if tuple(result.shape) != tuple(shape):
        raise Wrong(f"{what} has shape {tuple(result.shape)}, expected {tuple(shape)}.")
    return result


def _random(*shape: int, seed: int = 0) -> Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _with_weights_of(mine: torch.nn.Module, reference: torch.nn.Module, names: tuple) -> None:
    """Copy the reader's weights into the reference, once each named layer is there, of the
    book's kind and size; a dotted name reaches into a submodule (``self_attn.q_proj``)."""
    for name in names:
        ours = reference.get_submodule(name)
        try:
            theirs = mine.get_submodule(name)
        except AttributeError:
            theirs = None
        kind = type(ours).__name__
        kind = "a linear layer" if kind == "Linear" else f"an nn.{kind}"
        if not isinstance(theirs, type(ours)):
            raise Wrong(f"the module needs {kind} `{name}`, as in the book.")
        sizes = [{k: tuple(t.shape) for k, t in m.state_dict().items()} for m in (theirs, ours)]
        if sizes[0] != sizes[1]:
            raise Wrong(f"`{name}` holds {sizes[0]}; the book's holds {sizes[1]}.")
    reference.load_state_dict(mine.state_dict(), strict=False)
