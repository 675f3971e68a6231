"""Build book/glossary.md from the chapters: every `**English term** (中文)` is an entry.

    python tools/glossary.py           # write book/glossary.md
    python tools/glossary.py --check   # exit 1 if book/glossary.md is out of date

A chapter introduces a key term once, in bold, followed by its Chinese name in parentheses.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
OUT = BOOK / "glossary.md"
# The Chinese name may start with a Latin name (``Nadaraya–Watson 核回归``); it must hold Chinese.
TERM = re.compile(
    r"\*\*([^*\n]+?)\*\*\s*[(（]\s*((?:[A-Za-z][^()（）\n]*?\s)?[\u3400-\u9fff][^)）\n]*?)\s*[)）]"
)

HEADER = """# Glossary (术语表)

Every key term of the book with its Chinese name and the chapter that introduces it. This page is
generated from the chapters by `python tools/glossary.py`; a test keeps it up to date.

| English | 中文 | introduced in |
|---|---|---|
"""


def chapter_title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def build() -> str:
    entries: dict[str, tuple[str, str, str]] = {}
    for path in sorted(BOOK.glob("[0-9]*.ipynb")):
        nb = jupytext.read(path)
        doc = path.stem
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for english, chinese in TERM.findall(cell.source):
                key = english.strip().lower()
                entries.setdefault(key, (english.strip(), chinese.strip(), doc))
    # One row per Chinese term: two English forms of one concept ("autoregressive" in chapter 4,
    # "autoregression" in chapter 13) share one row, with every chapter that introduces them.
    merged: dict[str, tuple[list[str], str, list[str]]] = {}
    for en, zh, doc in entries.values():
        names, _, docs = merged.setdefault(zh, ([], zh, []))
        names.append(en)
        if doc not in docs:
            docs.append(doc)
    rows = [
        f"| {', '.join(sorted(names, key=str.lower))} | {zh} | "
        + ", ".join(f"{{doc}}`{doc}`" for doc in sorted(docs))
        + " |"
        for names, zh, docs in sorted(
            merged.values(), key=lambda e: min(e[0], key=str.lower).lower()
        )
    ]
    return HEADER + "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    text = build()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print("book/glossary.md is out of date; run `python tools/glossary.py` and commit it.")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({text.count(chr(10)) - HEADER.count(chr(10))} terms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
