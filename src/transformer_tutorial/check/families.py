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


def update_catalog(po_path=None) -> None:
    """Bring ``locale/zh_CN/LC_MESSAGES/checker.po`` in step with the templates, as msgmerge
    does: a new template gets an empty translation, a removed one is marked obsolete."""
    import polib

    from ..language import LOCALE as LOCALE_DIR

    path = po_path or LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "checker.po"
    catalog = polib.pofile(str(path)) if path.exists() else polib.POFile()
    catalog.metadata = catalog.metadata or {
        "Project-Id-Version": "transformer_tutorial.check",
        "Language": "zh_CN",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Transfer-Encoding": "8bit",
    }
    templates: dict[str, list[str]] = {}
    for key, template in all_messages().items():
        templates.setdefault(template, []).append(key)
    for entry in catalog:
        entry.obsolete = entry.msgid not in templates
    known = {entry.msgid for entry in catalog}
    for template, keys in templates.items():
        if template not in known:
            catalog.append(polib.POEntry(msgid=template, msgstr="", comment=" ".join(keys)))
    path.parent.mkdir(parents=True, exist_ok=True)
    catalog.save(str(path))
