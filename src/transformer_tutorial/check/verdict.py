"""What a check says: the verdict, the message of a mistake, and the language it is said in.

Every sentence a check can say is a template with named fields, looked up by its id in one
family's table (``MISTAKES`` for the mistakes a check can name, ``MESSAGES`` for the rest), so
that a translation can replace the template and nothing else: ``say(TABLE, "id", field=...)``.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

POLARITY = "in this book a mask is True where a query *may attend*"

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"  # the package's own catalogs
_LANGUAGE_VARIABLE = "TRANSFORMER_TUTORIAL_LANG"
_language: str | None = None  # set_language's choice; None: the environment decides


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
    """The outcome of one check: ``ok``, the block's name, and what to say to the reader;
    ``mistake`` is the id of the mistake named (None when none is)."""

    ok: bool
    block: str
    message: str
    mistake: str | None = None

    def __str__(self) -> str:
        return wrap_verdict(f"{'✓' if self.ok else '✗'} {self.block}: {self.message}")

    def __bool__(self) -> bool:
        return self.ok


class Wrong(Exception):
    """Raised inside a check with the message for the reader (and the id of the mistake it
    names, if it names one)."""

    def __init__(self, message: str, mistake: str | None = None) -> None:
        super().__init__(message)
        self.mistake = mistake

    @classmethod
    def named(cls, table: dict[str, str], key: str, **fields: object) -> Wrong:
        """The mistake ``key`` of a family's ``MISTAKES``, named: ``raise Wrong.named(...)``."""
        return cls(say(table, key, **fields), mistake=key)

    @classmethod
    def differs(cls, table: dict[str, str], key: str, **fields: object) -> Wrong:
        """A difference described by the message ``key`` (no mistake named)."""
        return cls(say(table, key, **fields))


# --- the language of the messages ------------------------------------------------------------------


def set_language(code: str | None) -> None:
    """Say the verdicts in ``code`` (``"zh_CN"``, ``"en"``); None: as the environment variable
    ``TRANSFORMER_TUTORIAL_LANG`` says (English when it is unset)."""
    global _language
    _language = code


def language() -> str:
    """The language the verdicts are said in now."""
    return _language or os.environ.get(_LANGUAGE_VARIABLE, "") or "en"


_TRANSLATIONS: dict[str, dict[str, str]] = {}  # language -> {English template: translation}


def _catalog(code: str) -> dict[str, str]:
    """The translated templates of ``locale/<code>/LC_MESSAGES/checker.po`` (empty if none)."""
    if code not in _TRANSLATIONS:
        po = LOCALE_DIR / code / "LC_MESSAGES" / "checker.po"
        table = {}
        if po.exists():
            import polib  # only when a translation is asked for

            table = {e.msgid: e.msgstr for e in polib.pofile(str(po)) if e.translated()}
        _TRANSLATIONS[code] = table
    return _TRANSLATIONS[code]


def translate(text: str) -> str:
    """``text`` in the current language (itself when it has no translation)."""
    code = language()
    return text if code.startswith("en") else _catalog(code).get(text, text)


# --- messages by id ------------------------------------------------------------------------------


def say(table: dict[str, str], key: str, **fields: object) -> str:
    """The message ``key`` of ``table``, translated, with its named fields filled in."""
    return translate(table[key]).format(**fields)
