"""The family modules of the checker, and what they declare: the mistakes each can name."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from types import ModuleType

FAMILIES = (
    "sequences",
    "recurrent",
    "seq2seq",
    "bahdanau",
    "pooling",
    "attention",
    "multihead",
    "self_attention",
    "layers",
    "layer_norm",
    "smoothing",
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

# what families share: their messages too
SHARED = ("engine", "hints", "tensors", "diagnoses", "verdict")


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
        tables = [getattr(module, t, {}) for t in ("MISTAKES", "MESSAGES", "NAMES")]
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


# --- a verdict printed in English, said again in the language in use ----------------------------

_FIELD = re.compile(r"\{(\w+)(?:[:!][^{}]*)?\}")
_PIECE = re.compile(r"(\{\w+(?:[:!][^{}]*)?\})")


@functools.cache
def _templates() -> list[tuple[list[str], str]]:
    """Each template with fields, split into its pieces (literal, field, literal, ...); the
    most specific (the most literal words) first."""
    found = []
    for template in set(all_messages().values()):
        pieces = _PIECE.split(template)
        literal = "".join(pieces[0::2])
        if len(pieces) > 1 and len(literal) >= 5:
            found.append((pieces, template))
    return sorted(found, key=lambda t: -len("".join(t[0][0::2])))


def _parses(text: str, pieces: list[str], at: int = 0):
    """Every way ``text[at:]`` reads as ``pieces`` (a literal, then field, literal, ...): the
    fields' values, in order."""
    literal = pieces[0].replace("{{", "{").replace("}}", "}")
    if not text.startswith(literal, at):
        return
    at += len(literal)
    if len(pieces) == 1:
        if at == len(text):
            yield []
        return
    after = pieces[2].replace("{{", "{").replace("}}", "}")
    ends = (
        range(at + 1, len(text) + 1)
        if not after
        else (i for i in range(at + 1, len(text) + 1) if text.startswith(after, i))
    )
    for end in ends:
        for rest in _parses(text, pieces[2:], end):
            yield [text[at:end], *rest]


@functools.lru_cache(maxsize=4096)
def said_again(english: str) -> str:
    """``english``, one message as the checker said it in English, in the language in use: the
    template it came from, translated, with its fields said again the same way (a field that
    is not a message stays as it was). Text that no template says is returned as it is."""
    from .verdict import translate

    exact = translate(english)
    if exact != english or english in all_messages().values():
        return exact
    escaped = english.replace("{", "{{").replace("}", "}}")  # a template with literal braces
    if translate(escaped) != escaped:
        return translate(escaped).replace("{{", "{").replace("}}", "}")
    for pieces, template in _templates():
        if not all(p.replace("{{", "{").replace("}}", "}") in english for p in pieces[0::2]):
            continue  # a literal part of the template is missing: not this one
        names = [_FIELD.fullmatch(p).group(1) for p in pieces[1::2]]
        best = None  # the reading whose fields are most often messages themselves
        for i, values in enumerate(_parses(english, pieces)):
            if len(set(names)) < len(names):  # a field said twice says the same both times
                seen = {}
                if any(seen.setdefault(n, v) != v for n, v in zip(names, values, strict=True)):
                    continue
            said = [said_again(v) for v in values]
            score = (  # the fields that are messages, then the fields whose brackets close
                sum(a != v for a, v in zip(said, values, strict=True)),
                sum(v.count("`") % 2 == 0 and v.count("(") == v.count(")") for v in values),
            )
            if best is None or score > best[0]:
                best = (score, dict(zip(names, said, strict=True)))
            if i > 200:
                break
        if best is not None:
            return _filled(translate(template), best[1])
    if " -- " in english:  # a message and its hint
        return "——".join(said_again(part) for part in english.split(" -- "))
    parts = english.split(", then ")  # sub-layers named in order, when each is a message
    if len(parts) > 1 and all(translate(p) != p for p in parts):
        return translate(", then ").join(translate(p) for p in parts)
    named = [_named_first(p) for p in english.split(", ")]  # "self-attention norm2, ..."
    if len(named) > 1 and all(n is not None for n in named):
        return ", ".join(named)
    return english


def _filled(template: str, fields: dict[str, str]) -> str:
    """``template`` with its fields said and its literal braces (``{{``) unescaped."""
    slots = [fields.get(m.group(1), m.group(0)) for m in _FIELD.finditer(template)]
    held = _FIELD.sub("\0", template).replace("{{", "{").replace("}}", "}").split("\0")
    return "".join(part + value for part, value in zip(held, [*slots, ""], strict=True))


def _named_first(part: str) -> str | None:
    """``part`` said again when it is a message followed by a name (``self-attention norm2``):
    the message translated, the name as it was; None otherwise."""
    from .verdict import translate

    words = part.split(" ")
    for n in range(len(words) - 1, 0, -1):
        head = " ".join(words[:n])
        if translate(head) != head:
            return f"{translate(head)} {' '.join(words[n:])}"
    return None


def unfold(lines: list[str]) -> str:
    """The verdict that ``wrap_verdict`` folded into ``lines``, on one line again."""
    from .verdict import is_wide

    text = lines[0]
    for line in lines[1:]:
        rest = line[2:]
        if re.search(r"[A-Za-z]-\Z", text) or is_wide(text[-1:]) or is_wide(rest[:1]):
            text += rest  # a word broken at its hyphen, or a break between CJK characters
        else:
            text += " " + rest
    return text


def verdicts_said_again(output: str) -> str:
    """Every verdict line (``✓ block: ...`` / ``✗ block: ...``, folded or not) of a printed
    output, said again in the language in use and folded as the checker folds it."""
    from .verdict import MESSAGES, say, wrap_verdict

    lines, out, i = output.split("\n"), [], 0
    while i < len(lines):
        if not re.match(r"[✓✗] [^:]+?: ", lines[i]):
            out.append(lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].startswith("  "):
            j += 1
        mark, block, message = re.match(
            r"([✓✗]) ([^:]+?): (.*)\Z", unfold(lines[i:j]), re.S
        ).groups()
        shown = say(MESSAGES, "verdict", mark=mark, block=said_again(block),
                    message=said_again(message))  # fmt: skip
        out.append(wrap_verdict(shown))
        i = j
    return "\n".join(out)
