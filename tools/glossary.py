"""Build book/glossary.md from the chapters: every `**English term** (中文)` is an entry.

    python tools/glossary.py           # write book/glossary.md
    python tools/glossary.py --check   # exit 1 if book/glossary.md is out of date

A chapter introduces a key term once, in bold, followed by its Chinese name in parentheses. The
Chinese edition's term list, locale/zh_CN/terms.yml, adds the basic terms that no chapter
introduces in bold (its entries with a `chapter`) and the other names a reader meets elsewhere
(`also`: 教师强制（又称强制教学）). The page ends with the same terms ordered by the pinyin of
their Chinese names (pypinyin), the index a Chinese reader looks a term up in.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import yaml
from pypinyin import Style, load_phrases_dict, pinyin

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
OUT = BOOK / "glossary.md"
TERMS = ROOT / "locale" / "zh_CN" / "terms.yml"
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
INDEX = """
## Chinese → English (中文 → 英文)

The same terms ordered by the pinyin of their Chinese names, for a reader who meets a term in
Chinese. A name the book does not use but a reader meets elsewhere points to the book's term.

| 中文 | 拼音 | English | introduced in |
|---|---|---|---|
"""
# Readings that pypinyin's phrase table gets wrong for the glossary's terms.
load_phrases_dict(
    {
        "重采样": [["chóng"], ["cǎi"], ["yàng"]],
        "微调": [["wēi"], ["tiáo"]],
        "倒数": [["dào"], ["shù"]],
        "子层": [["zǐ"], ["céng"]],
        "子词": [["zǐ"], ["cí"]],
    }
)


def terms() -> list[dict]:
    """The Chinese edition's term list (locale/zh_CN/terms.yml)."""
    return yaml.safe_load(TERMS.read_text(encoding="utf-8"))["terms"]


def reading(chinese: str) -> list[str]:
    """The pinyin of a Chinese name, syllable by syllable, with tone marks; Latin kept."""
    name = re.split(r"[，（]", chinese)[0]
    return [s[0].strip() for s in pinyin(name, style=Style.TONE) if re.search(r"\w", s[0])]


def pinyin_key(chinese: str) -> tuple:
    """Order by the syllables without tones, then by tones, as a Chinese index is ordered."""
    name = re.split(r"[，（]", chinese)[0]
    numbered = [
        s[0].strip().lower() for s in pinyin(name, style=Style.TONE3) if re.search(r"\w", s[0])
    ]
    return (
        [re.sub(r"\d", "", s) for s in numbered],
        [re.sub(r"\D", "", s) or "5" for s in numbered],
        chinese,
    )


def chapter_title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def build() -> str:
    entries: dict[str, tuple[str, str, str]] = {}
    listed = terms()
    for path in sorted(BOOK.glob("[0-9]*.ipynb")):
        nb = jupytext.read(path)
        doc = path.stem
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for english, chinese in TERM.findall(cell.source):
                key = english.strip().lower()
                entries.setdefault(key, (english.strip(), chinese.strip(), doc))
    for term in listed:  # basic terms that no chapter introduces in bold
        if term.get("chapter"):
            entries.setdefault(term["en"].lower(), (term["en"], term["zh"], term["chapter"]))
    also = {t["en"].lower(): t["also"] for t in listed if t.get("also")}
    entries = {
        key: (en, f"{zh}（又称{also[key]}）" if key in also else zh, doc)
        for key, (en, zh, doc) in entries.items()
    }
    # One row per Chinese term: two English forms of one concept ("autoregressive" in chapter 4,
    # "autoregression" in chapter 13) share one row, with every chapter that introduces them.
    merged: dict[str, tuple[list[str], str, list[str]]] = {}
    for en, zh, doc in entries.values():
        names, _, docs = merged.setdefault(zh, ([], zh, []))
        names.append(en)
        if doc not in docs:
            docs.append(doc)

    def cells(names: list[str], docs: list[str]) -> tuple[str, str]:
        return ", ".join(sorted(names, key=str.lower)), ", ".join(
            f"{{doc}}`{doc}`" for doc in sorted(docs)
        )

    rows = [
        "| {0} | {2} | {1} |".format(*cells(names, docs), zh)
        for names, zh, docs in sorted(
            merged.values(), key=lambda e: min(e[0], key=str.lower).lower()
        )
    ]
    index = [(zh, *cells(names, docs)) for names, zh, docs in merged.values()]
    for term in listed:  # 强制教学（见教师强制）: the other name points to the book's term
        if term.get("also"):
            row = next((r for r in index if r[0].startswith(term["zh"] + "（")), None)
            if row:
                see = term["zh"] if re.match("[\u4e00-\u9fff]", term["zh"]) else f" {term['zh']}"
                index.append((f"{term['also']}（见{see}）", row[1], row[2]))
    index_rows = [
        f"| {zh} | {' '.join(reading(zh))} | {en} | {docs} |"
        for zh, en, docs in sorted(index, key=lambda r: pinyin_key(r[0]))
    ]
    return HEADER + "\n".join(rows) + "\n" + INDEX + "\n".join(index_rows) + "\n"


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
