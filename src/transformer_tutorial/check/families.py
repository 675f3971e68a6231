"""The family modules of the checker, and what they declare: the mistakes each can name."""

from __future__ import annotations

import importlib
from types import ModuleType

FAMILIES = (
    "sequences",
    "recurrent",
    "seq2seq",
    "pooling",
    "attention",
    "self_attention",
    "layers",
    "blocks",
    "decoding",
    "beam_search",
    "kv_cache",
    "translator",
    "bert",
    "gpt",
    "vision",
    "long_sequences",
)

SHARED = ("engine", "tensors", "diagnoses")  # what families share: their messages too


def modules(names: tuple[str, ...] = FAMILIES) -> list[ModuleType]:
    """The family modules, imported."""
    found = []
    for name in names:
        try:
            found.append(importlib.import_module(f"{__package__}.{name}"))
        except ModuleNotFoundError:
            continue
    return found


def declared_mistakes() -> dict[str, str]:
    """Every mistake id a check can name, with its message template; an id is declared once."""
    declared: dict[str, str] = {}
    for module in modules(FAMILIES + SHARED):
        for key, template in getattr(module, "MISTAKES", {}).items():
            if key in declared and declared[key] != template:
                raise ValueError(f"the mistake id {key!r} is declared twice")
            declared[key] = template
    return declared


def all_messages() -> dict[str, str]:
    """Every template a check can say, mistakes and descriptions, keyed ``module:id``."""
    return {
        f"{module.__name__.rsplit('.', 1)[-1]}:{key}": template
        for module in modules(FAMILIES + SHARED)
        for table in ("MISTAKES", "MESSAGES")
        for key, template in getattr(module, table, {}).items()
    }
