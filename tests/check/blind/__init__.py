"""Blind sets: reader mistakes and correct variants written from the chapters' text alone.

Each set (``b1/``, ``b2/``) was written by someone who had read only the chapters (their prose,
their code and their "Your turn" cells), never the checker's code or the catalogue of mistakes in
``tests/mistakes/``. A module per check holds a list ``CASES`` of :class:`BlindCase`. The sets
measure what the checker says to mistakes its authors did not imagine: whether each mistake is
caught, whether each correct variant passes, and whether the verdict names the mistake made.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class BlindCase:
    check: str  # the check's name, e.g. "check_attention"
    name: str  # a short unique identifier, e.g. "softmax_over_queries"
    code: object  # what the reader passes to the check: a function, a class, ...
    kind: Literal["mistake", "correct"]
    what: (
        str  # in the reader's words: what was done (for a mistake: the slip; else: how it differs)
    )


def load(set_name: str) -> list[BlindCase]:
    """Every case of one set (``"b1"`` or ``"b2"``), in module order."""
    package = importlib.import_module(f"{__name__}.{set_name}")
    cases: list[BlindCase] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        cases += importlib.import_module(f"{package.__name__}.{info.name}").CASES
    return cases
