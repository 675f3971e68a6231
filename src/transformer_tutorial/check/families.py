"""The family modules of the checker, and what they declare: the mistakes each can name."""

from __future__ import annotations

import ast
import importlib
import inspect
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

SHARED = ("engine", "tensors", "diagnoses", "verdict")  # what families share: their messages too


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


def said_by_checks(module: ModuleType) -> dict[str, str]:
    """What each check of ``module`` says besides its tables: the block's name (``@check``'s
    first argument) and the sentence it returns when all is right, keyed ``check:block`` and
    ``check:passed``; read from the source, so that the catalog holds them too."""
    found = {}
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "check":
                found[f"{node.name}:block"] = decorator.args[0].value
                for i, sentence in enumerate(_returned_sentences(node)):
                    found[f"{node.name}:passed{i or ''}"] = sentence
    return found


def _returned_sentences(function: ast.FunctionDef) -> list[str]:
    """The strings ``function`` itself returns (not those of the functions defined inside it)."""
    found, todo = [], list(function.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.FunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant):
            found.append(node.value.value)
        todo += list(ast.iter_child_nodes(node))
    return found


def all_messages() -> dict[str, str]:
    """Every template a check can say, mistakes and descriptions, keyed ``module:id``; a
    check's block name and its sentence for a right answer too (:func:`said_by_checks`)."""
    found = {}
    for module in modules(FAMILIES + SHARED):
        name = module.__name__.rsplit(".", 1)[-1]
        tables = [getattr(module, t, {}) for t in ("MISTAKES", "MESSAGES")]
        for table in [*tables, said_by_checks(module)]:
            found |= {f"{name}:{key}": template for key, template in table.items()}
    return found


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
