"""The language of what the package draws: English (the default) or Chinese (the Chinese edition).

Hand-written (not generated from a notebook).

The Chinese notebooks (``zh/book/*.ipynb``) choose Chinese in their first cell::

    from transformer_tutorial.language import set_language
    set_language("zh_CN")

and anywhere else the environment variable ``TRANSFORMER_TUTORIAL_LANGUAGE=zh_CN`` does the same.
The texts are gettext catalogs shipped inside the package, keyed by the English text
(``transformer_tutorial/locale/<language>/LC_MESSAGES/<domain>.po``; the diagrams' labels are the
domain ``diagrams``). A text with no translation is used as it is.
"""

from __future__ import annotations

import ast
import os
import re
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh_CN")
ENVIRONMENT_VARIABLE = "TRANSFORMER_TUTORIAL_LANGUAGE"
LOCALE = Path(__file__).resolve().parent / "locale"
_chosen: str | None = None


def _canonical(language: str) -> str:
    name = language.strip().replace("-", "_")
    if name.lower() in ("zh", "zh_cn", "zh_hans", "cn"):
        return "zh_CN"
    if name.lower().startswith("en") or name.lower() in ("", "c", "posix"):
        return "en"
    raise ValueError(f"language must be one of {LANGUAGES} (or 'zh'), got {language!r}")


def set_language(language: str | None) -> None:
    """Draw in ``language`` ("en" or "zh_CN") from now on; ``None`` goes back to the
    environment variable's choice (English when it is not set)."""
    global _chosen
    _chosen = None if language is None else _canonical(language)


def language() -> str:
    """The language in use: the one set by :func:`set_language`, else the environment's."""
    if _chosen is not None:
        return _chosen
    return _canonical(os.environ.get(ENVIRONMENT_VARIABLE, "en"))


def read_po(path: Path) -> dict[str, str]:
    """The translations of a gettext catalog: {English: translation}, without the empty, fuzzy
    and obsolete ones (a small reader, so that the package needs no gettext library)."""
    table: dict[str, str] = {}
    entry: dict[str, list[str]] = {}
    key, fuzzy = None, False

    def flush() -> None:
        msgid, msgstr = "".join(entry.get("msgid", [])), "".join(entry.get("msgstr", []))
        if msgid and msgstr and not fuzzy:
            table[msgid] = msgstr

    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        line = line.strip()
        if not line:
            flush()
            entry, key, fuzzy = {}, None, False
        elif line.startswith("#,"):
            fuzzy = fuzzy or "fuzzy" in line
        elif line.startswith("#"):
            continue
        elif m := re.match(r'^(msgid|msgstr|msgctxt)\s+(".*")$', line):
            key = m.group(1)
            entry[key] = [ast.literal_eval(m.group(2))]
        elif line.startswith('"') and key:
            entry[key].append(ast.literal_eval(line))
    return table


@cache
def _catalog(domain: str, language: str) -> dict[str, str]:
    path = LOCALE / language / "LC_MESSAGES" / f"{domain}.po"
    return read_po(path) if path.exists() else {}


def translate(text: str, domain: str = "diagrams") -> str:
    """``text`` in the language in use (the English text where the catalog has none)."""
    lang = language()
    if lang == "en" or not text:
        return text
    return _catalog(domain, lang).get(text, text)
