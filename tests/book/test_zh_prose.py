"""The Chinese edition's prose, as a Chinese reader and editor check it: the study notes quoted in
their own words, one term per concept, one wording per repeated sentence, Chinese inside display
maths, the papers' English glossed, and no calques of English.

The term list is ``locale/zh_CN/terms.yml``: the glossary (``tools/glossary.py``), CONTRIBUTING.md
and README.zh-CN.md follow it, and the tests below hold the catalogs to it. The notes are the three
study notes in ``../shared/seeds/`` that the book was written from.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import polib
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "book"
TERMS = yaml.safe_load((ROOT / "locale" / "zh_CN" / "terms.yml").read_text(encoding="utf-8"))[
    "terms"
]
NOTES = sorted((ROOT.parent / "shared" / "seeds").glob("*.txt"))
HAN = "\u4e00-\u9fff"


PACKAGE_CATALOGS = ROOT / "src" / "transformer_tutorial" / "locale" / "zh_CN" / "LC_MESSAGES"


def messages() -> list[tuple[str, polib.POEntry]]:
    """Every translated message of every page, and of the package's catalogs (the checker's
    verdicts, the diagrams' labels): (page or catalog, entry)."""
    paths = sorted(CATALOGS.glob("*.po")) + sorted(PACKAGE_CATALOGS.glob("*.po"))
    return [
        (path.stem, entry)
        for path in paths
        for entry in polib.pofile(str(path))
        if not entry.obsolete and entry.msgstr
    ]


MESSAGES = messages()


# --- the notes, quoted as they are -------------------------------------------------------------


def flat(text: str) -> str:
    """A text as its reader sees it, for comparison: the notes' \\( \\) and the book's $ $ alike,
    TeX's grouping braces not counted (``{\\alpha }_{ti}`` is ``\\alpha_{ti}``), no whitespace,
    no Markdown emphasis."""
    text = re.sub(r"\\[()\[\]]", "$", text).replace("$$", "$")
    return re.sub(r"[\s{}*]", "", text)


def han(text: str) -> int:
    return len(re.findall(f"[{HAN}]", text))


QUOTE = re.compile(r"“([^“”]*)”|「([^「」]*)」")
ATTRIBUTED = re.compile(r"笔记(?!本)")  # 笔记 is the notes; 笔记本电脑 is a laptop
ENGLISH_SENTENCE = re.compile(r"[A-Za-z]{2,}(?:[ ,;:]+[A-Za-z'-]{2,}){3}")
STRAY_SPACE = re.compile(f"[{HAN}，。；：、！？）][ \t\n]+[{HAN}（，。；：]")


def in_notes(quotation: str, notes: str) -> bool:
    """Every piece of the quotation (pieces are cut at an ellipsis) is a passage of the notes, in
    the notes' order; a quotation may end where the notes' sentence goes on (its last
    punctuation mark is then the book's)."""
    pieces = [flat(p) for p in re.split(r"……|…|\.\.\.", quotation)]
    pieces = [p for p in pieces if p]
    if pieces:
        pieces[-1] = pieces[-1].rstrip("。，；：！？")
    at = 0
    for piece in pieces:
        at = notes.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    return bool(pieces)


def quotations(notes: str) -> list[tuple[str, str]]:
    """The quotations of the notes in the Chinese pages, (page, quotation):

    - a paragraph of the notes quoted as a block (its message is Chinese in both editions);
    - a passage in “…” or 「…」 of at least six Chinese characters that the same sentence
      attributes to the notes (笔记 before it), or that is a passage of the notes wherever
      it stands."""
    found = []
    for page, entry in MESSAGES:
        if page == "glossary":
            continue
        text = entry.msgstr
        if entry.msgid == text and han(text) >= 6 and not ENGLISH_SENTENCE.search(text):
            found.append((page, text))
            continue
        for m in QUOTE.finditer(text):
            quoted = m.group(1) if m.group(1) is not None else m.group(2)
            if han(quoted) < 6:
                continue
            sentence = re.split(r"[。！？]", text[: m.start()])[-1]
            if ATTRIBUTED.search(sentence) or in_notes(quoted, notes):
                found.append((page, quoted))
    return found


@pytest.fixture(scope="module")
def notes() -> str:
    if not NOTES:
        pytest.skip("the study notes (../shared/seeds/*.txt) are not beside this checkout")
    return flat("\n".join(p.read_text(encoding="utf-8") for p in NOTES))


def test_the_notes_are_quoted_in_their_own_words(notes: str) -> None:
    """A quotation of the notes is the notes' text, not a Chinese rendering of the English
    paraphrase, and carries no spaces left over from line wrapping."""
    found = quotations(notes)
    assert len(found) >= 50, f"only {len(found)} quotations of the notes recognised"
    wrong = [(page, q[:70]) for page, q in found if not in_notes(q, notes)]
    assert not wrong, f"quoted, but not in the notes' words: {wrong}"
    spaced = [
        (page, q[max(0, m.start() - 10) : m.end() + 10])
        for page, q in found
        for m in [STRAY_SPACE.search(re.sub(r"\$[^$]*\$|`[^`]*`", "$", q))]
        if m
    ]
    assert not spaced, f"stray spaces inside quotations of the notes: {spaced}"


def test_the_quotation_check_can_fail(notes: str) -> None:
    assert in_notes("当值是0的时候，点乘后也是0，所以这个位置的权重就变为0", notes)
    assert in_notes("即使很短的语音信号转化的向量也是很长的……难以训练。", notes)
    assert not in_notes("所以该位置的权重变为 0", notes)  # the English paraphrase, back-translated
    assert not in_notes("难以训练……即使很短的语音信号转化的向量也是很长的", notes)  # out of order


# --- one term per concept ---------------------------------------------------------------------


def outside_quotations(text: str) -> str:
    """A quotation keeps its author's words (the notes say LayerNorm and 隐藏层)."""
    return QUOTE.sub(" ", text)


def test_the_chinese_pages_use_one_term_per_concept() -> None:
    """No variant of a term of terms.yml in any Chinese page; the other name a reader meets
    elsewhere (教师强制's 强制教学) only where the book names it as such (又称, 称为, 见)."""
    found = []
    for page, entry in MESSAGES:
        text = outside_quotations(entry.msgstr)
        for term in TERMS:
            for variant in term.get("variants", []):
                if m := re.search(variant, text):
                    found.append(f"{page}: {m.group(0)} (use {term['zh']}) in {text[:60]!r}")
            if also := term.get("also"):
                for m in re.finditer(re.escape(also), text):
                    named = re.search(r"(又称|称为|称|见)\s*$", text[: m.start()])
                    if not named and not text[m.end() :].startswith("（见"):
                        found.append(f"{page}: {also} (use {term['zh']}) in {text[:60]!r}")
    assert not found, found[:10]


def glossary_chinese() -> list[str]:
    rows = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8").split("\n## ")[0]
    return [line.split("|")[2].strip() for line in rows.splitlines() if line.count("|") >= 4][2:]


def test_the_glossary_is_the_source_of_every_term() -> None:
    """Every standard term of terms.yml is a glossary entry (with its other name, if any), and
    no glossary entry is a variant."""
    chinese = glossary_chinese()
    missing = [
        t["zh"]
        for t in TERMS
        if (f"{t['zh']}（又称{t['also']}）" if t.get("also") else t["zh"]) not in chinese
    ]
    assert not missing, f"terms of terms.yml with no glossary entry: {missing}"
    variants = [
        (zh, v) for zh in chinese for t in TERMS for v in t.get("variants", []) if re.search(v, zh)
    ]
    assert not variants, variants


def test_the_glossary_has_a_pinyin_ordered_chinese_index() -> None:
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    index = text.split("\n## ")[1]
    rows = [line.split("|")[1:4] for line in index.splitlines() if line.count("|") >= 5][2:]
    readings = [r[1].strip() for r in rows]
    assert len(rows) > len(glossary_chinese()), "the index lacks entries of the glossary"
    sys_path = str(ROOT / "tools")
    import sys

    sys.path.insert(0, sys_path)
    import glossary

    keys = [glossary.pinyin_key(r[0].strip()) for r in rows]
    assert keys == sorted(keys), "the Chinese index is not in pinyin order"
    assert "jiào shī qiáng zhì" in readings and "zhù yì lì" in readings
    assert any(r[0].strip() == "强制教学（见教师强制）" for r in rows)


def contributing_section() -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return text.split("**How the Chinese is written.**", 1)[1].split("\n\n", 1)[0]


def test_contributing_names_the_term_list_and_only_its_terms() -> None:
    section = contributing_section()
    assert "locale/zh_CN/terms.yml" in section
    standard = {t["zh"] for t in TERMS} | set(glossary_chinese())
    named = re.findall(f"[{HAN}]{{2,}}", section.split("(", 1)[1].split(")", 1)[0])
    assert named, "CONTRIBUTING's term list is empty"
    assert set(named) <= standard, set(named) - standard
    banned = [v for t in TERMS for v in t.get("variants", []) if re.search(v, section)]
    assert not banned, f"CONTRIBUTING recommends a variant: {banned}"


def test_the_chinese_readme_is_true_about_the_terms() -> None:
    """README.zh-CN.md names every term where the book departs from 《动手学深度学习》 with
    d2l-zh's name beside it, and sends the reader to the Chinese notebooks."""
    readme = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    departures = [t for t in TERMS if t.get("d2l")]
    assert len(departures) >= 5
    missing = [
        (t["zh"], t["d2l"]) for t in departures if t["zh"] not in readme or t["d2l"] not in readme
    ]
    assert not missing, f"README.zh-CN.md does not say where the terms differ: {missing}"
    assert "zh/book/" in readme


def test_the_chinese_readme_has_every_command_of_the_english_one() -> None:
    """As complete as README.md for a Chinese reader: every command of the English README's code
    blocks is in the Chinese one (comments translated; notebooks may be those of zh/book/)."""
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8").replace("zh/book/", "book/")
    commands = [
        line.split("  #")[0].strip()
        for block in re.findall(r"```[a-z]*\n(.*?)```", english, flags=re.S)
        for line in block.splitlines()
    ]
    commands = [c for c in commands if c and not c.startswith("#")]
    assert len(commands) >= 10
    missing = [c for c in commands if c not in chinese]
    assert not missing, f"README.zh-CN.md lacks these commands of README.md: {missing}"
    for caveat in ("YOUR-GITHUB-ORG", "torchrun", "CC-BY", "cmn.txt"):
        assert caveat in chinese, caveat


# --- one wording per repeated sentence ----------------------------------------------------------


# One English word, two meanings: a task's shape (形式, chapter 1's table), a tensor's (形状).
HOMONYMS = {"shape"}


def test_a_sentence_repeated_across_pages_has_one_translation() -> None:
    """The same English message on several pages is translated the same way everywhere (the
    glossary's English cells stay English there by rule)."""
    by_english = defaultdict(set)
    for page, entry in MESSAGES:
        if page != "glossary" and entry.msgid not in HOMONYMS:
            by_english[entry.msgid].add(entry.msgstr)
    differ = {en[:60]: sorted(zh) for en, zh in by_english.items() if len(zh) > 1}
    assert not differ, differ


BOILERPLATE = {
    # the last sentence of every "Your turn" exercise, the first of every list of solutions
    "As stored, the cell shows what you see before writing anything.": (
        "本页保存的是这个单元格在你还没动手写代码时的输出。"
    ),
    "Worked solutions, each behind a toggle:": "详细解答（每题点击展开）：",
}


def test_a_boilerplate_sentence_has_one_wording() -> None:
    wrong = []
    for english, chinese in BOILERPLATE.items():
        uses = [(p, e.msgstr) for p, e in MESSAGES if english in e.msgid]
        assert len(uses) >= 5, english
        wrong += [(p, zh[-50:]) for p, zh in uses if chinese not in zh]
    assert not wrong, wrong


# --- maths and the papers' English --------------------------------------------------------------

# Names in \text{} that are symbols, not prose (the paper's lrate, d_model, <bos>, bits per char).
SYMBOLS = {
    "model", "bos", "eos", "pad", "unk", "step", "lr", "lrate", "warmup", "tok",
    "max\\_tokens", "num\\_layers", "bytes", "MB", "MiB", "bpc", "peak", "cls", "box", "cell",
    "loss", "nearest", "base", "drop", "length", "LayerNorm", "fan-in",
}  # fmt: skip


def test_display_maths_speak_chinese() -> None:
    """English words in an equation's \\text{} are prose the Chinese reader should read in
    Chinese (\\text{输入门}, \\text{例如}); symbol names stay as the code spells them."""
    english = []
    for page, entry in MESSAGES:
        for text in re.findall(r"\\text(?:rm|bf|it)?\{([^{}]*)\}", entry.msgstr):
            words = set(re.findall(r"[A-Za-z\\_][A-Za-z\\_-]+", text)) - SYMBOLS
            if words:
                english.append((page, text))
    assert not english, english


def test_the_papers_english_is_glossed() -> None:
    """A sentence quoted from a paper in English carries its Chinese right after it, in
    parentheses or after 即 (a paper's title is a name and stays as it is)."""
    bare = []
    for page, entry in MESSAGES:
        text = entry.msgstr
        for m in re.finditer(r"“([^“”]*)”", text):
            if han(m.group(1)):  # a Chinese quotation, or the gloss itself
                continue
            words = re.findall(r"[A-Za-z][\w'’-]*", re.sub(r"\$[^$]*\$", " ", m.group(1)))
            sentence = re.split(r"[。！？]", text[: m.start()])[-1]
            if len(words) < 6 or not re.search(r"论文|第 \d+(\.\d+)* 节", sentence):
                continue
            if sum(w[0].isupper() for w in words) > len(words) / 2:  # a title
                continue
            after = text[m.end() : m.end() + 12]
            if not re.match(f"\\s*(（[^）]*[{HAN}]|，即)", after):
                bare.append((page, m.group(1)[:50]))
    assert not bare, f"paper quotations without a Chinese gloss: {bare}"


# --- Chinese, not English in Chinese characters -------------------------------------------------

CALQUES = {
    r"(?<![\d.])0\.\d+ 的(测试)?(句子|数字串|字符串|步|词元)": "a fraction as a count: 70.9 % 的测试句子",
    r"大杠杆": "'the big lever': 真正能大幅改变……的只有",
    r"诚实": "'honest(ly)': 如实 / 正确 / 正当",
    r"便宜|廉价": "'cheap': 快 / 计算量小 / 开销小",
    r"付出[^，。]{0,8}奈特": "'pays n nats': 损失为 n 奈特",
    r"走了一遍": "'walks through': 完整演示一遍",
    r"字体": "'script' (traditional or simplified) is not a font: 繁体 / 简体 / 写法",
}


def test_no_calques_of_english() -> None:
    found = [
        f"{page}: {m.group(0)} ({why}) in {entry.msgstr[max(0, m.start() - 20) : m.end() + 20]!r}"
        for page, entry in MESSAGES
        for pattern, why in CALQUES.items()
        for m in [re.search(pattern, outside_quotations(entry.msgstr))]
        if m
    ]
    assert not found, found
