"""The catalogue of mistakes readers make, one module per family of checks.

Each module of this folder holds two lists:

* ``MISTAKES``: :class:`Mistake` entries -- a reader's implementation with one typical mistake and
  the words the verdict must contain (the sentence a learner should read, or its key phrase);
* ``CORRECT``: :class:`Correct` entries -- right implementations written differently from the
  book's (vectorised, by loops, through PyTorch's fused kernels), which every check must accept.

``tests/check/test_catalogue.py`` runs every entry and asserts that each mistake is caught and named
and that each correct implementation passes. A check names a mistake by an id that its family module
declares in ``MISTAKES`` (``src/transformer_tutorial/check/<family>.py``); the catalogue entry of
that name is its example, and the verdict on it must carry the id.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    """One typical mistake: ``check(code)`` must fail with ``diagnosis`` in its message."""

    check: Callable  # the checker, e.g. ``check.check_attention``
    name: str  # a short id, unique within its module: "attention-unscaled"
    code: object  # the reader's function or class with the mistake
    diagnosis: str  # words the verdict must contain
    mistake: str | None = None  # the id the verdict names, when it is not ``name`` itself


@dataclass(frozen=True)
class Correct:
    """A right implementation written differently: ``check(code)`` must pass."""

    check: Callable
    name: str
    code: object


def _modules():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        yield importlib.import_module(f"{__name__}.{info.name}")


def all_mistakes() -> list[Mistake]:
    return [m for module in _modules() for m in getattr(module, "MISTAKES", [])]


def all_correct() -> list[Correct]:
    return [c for module in _modules() for c in getattr(module, "CORRECT", [])]
