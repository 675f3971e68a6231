"""What a check says: the verdict, the message of a mistake, and the language it is said in
(the package's, as ``transformer_tutorial.language.set_language`` chooses it).

Every sentence a check can say is a template with named fields, looked up by its id in one
family's table (``MISTAKES`` for the mistakes a check can name, ``MESSAGES`` for the rest), so
that a translation can replace the template and nothing else: ``say(TABLE, "id", field=...)``.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from ..language import set_language  # noqa: F401 (re-exported: the checker speaks it too)
from ..language import translate as translate_in

POLARITY = "in this book a mask is True where a query *may attend*"

MESSAGES = {
    "verdict": "{mark} {block}: {message}",  # one line of a verdict, as printed
    "polarity": POLARITY,
}


def is_wide(char: str) -> bool:
    """Does ``char`` take two columns in a terminal or a notebook's output (CJK)?"""
    return bool(char) and unicodedata.east_asian_width(char) in "WF"


def _width(char: str) -> int:
    return 2 if is_wide(char) else 1


_NO_START = "，。、；：？！）」』”’》】"  # Chinese punctuation that never starts a line
_NO_END = "（「『“‘《【"  # nor ends one


def _fold_wide(line: str, width: int) -> list[str]:
    """Fold a line holding CJK text at ``width`` columns: between two characters where one is
    CJK, or at a space, never inside a Latin word or a number."""
    lines, start, used, last_break = [], 0, 0, None
    for i, char in enumerate(line):
        used += _width(char)
        wide = _width(char) == 2 or _width(line[i - 1]) == 2
        if (
            i > start
            and (char == " " or wide)
            and char not in _NO_START
            and line[i - 1] not in _NO_END
        ):
            last_break = i
        if used > width and last_break is not None and last_break > start:
            lines.append(line[start:last_break].rstrip())
            start = last_break + (line[last_break] == " ")
            used = sum(_width(c) for c in line[start : i + 1]) + 2
            last_break = None
    lines.append(line[start:])
    return [lines[0]] + ["  " + rest for rest in lines[1:]]


def wrap_verdict(text: str, width: int = 100) -> str:
    """Fold each line longer than ``width`` columns at spaces (and between CJK characters), so
    a verdict fits the book's text column."""
    lines = []
    for line in text.split("\n"):
        if sum(_width(c) for c in line) <= width:
            lines.append(line)
        elif any(_width(c) == 2 for c in line):
            lines += _fold_wide(line, width)
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
        mark = "✓" if self.ok else "✗"
        return wrap_verdict(
            say(MESSAGES, "verdict", mark=mark, block=self.block, message=self.message)
        )

    def __bool__(self) -> bool:
        return self.ok


class Wrong(Exception):
    """Raised inside a check with the message for the reader (and the id of the mistake it
    names, if it names one)."""

    def __init__(self, message: str, mistake: str | None = None, plain: str | None = None) -> None:
        super().__init__(message)
        self.mistake = mistake
        self.plain = plain  # the difference alone, said when the mistake is not confirmed

    @classmethod
    def named(cls, table: dict[str, str], key: str, **fields: object) -> Wrong:
        """The mistake ``key`` of a family's ``MISTAKES``, named: ``raise Wrong.named(...)``."""
        return cls(say(table, key, **fields), mistake=key)

    @classmethod
    def differs(cls, table: dict[str, str], key: str, **fields: object) -> Wrong:
        """A difference described by the message ``key`` (no mistake named)."""
        return cls(say(table, key, **fields))

    @classmethod
    def named_or_differs(cls, mistakes: dict[str, str], messages: dict[str, str], key: str,
                         **fields: object) -> Wrong:  # fmt: skip
        """The mistake ``key`` named when ``mistakes`` holds it, else the message ``key`` of
        ``messages``: for a family whose candidates are some named, some only described."""
        if key in mistakes:
            return cls.named(mistakes, key, **fields)
        return cls.differs(messages, key, **fields)


def confirmed(wrongs: list[Wrong], reproduces: Callable[[str | None], bool]) -> Wrong:
    """One verdict from every probe that failed. A mistake is named only when what it computes
    reproduces the reader's results on every probe, the ones they got right as well
    (``reproduces(mistake)``): the first failure whose mistake does; otherwise the first
    difference, described (its ``plain`` words) -- a name that one probe contradicts would send
    the reader looking for a mistake they did not make."""
    for wrong in wrongs:
        if wrong.mistake is not None and reproduces(wrong.mistake):
            return wrong
    first = wrongs[0]
    return Wrong(first.plain or str(first)) if first.mistake else first


# --- the language of the messages: the package's own choice (transformer_tutorial.language) ------


def translate(text: str) -> str:
    """``text`` in the language in use: the checker's catalog (the gettext domain ``checker``,
    ``transformer_tutorial/locale/<language>/LC_MESSAGES/checker.po``), English where it has
    none."""
    return translate_in(text, domain="checker")


# --- messages by id ------------------------------------------------------------------------------


def say(table: dict[str, str], key: str, **fields: object) -> str:
    """The message ``key`` of ``table``, translated, with its named fields filled in (a field
    that is itself a message of the catalog, such as :data:`POLARITY`, translated too)."""
    said = {k: translate(v) if isinstance(v, str) else v for k, v in fields.items()}
    return _CJK_SPACE.sub("", translate(table[key]).format(**said))


# a space left between two Chinese characters where a translated name fills a field
_CJK_SPACE = re.compile(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])")
