"""The Chinese edition's catalogs: the merge that keeps them in step with the English, and the
rule that an English paragraph cannot change without its Chinese.

The catalogs are standard gettext files (locale/zh_CN/LC_MESSAGES/book/*.po), one per page,
keyed by the English paragraphs that Sphinx's gettext builder extracts from the stored notebooks
(tools/i18n.py). The checks of the built Chinese pages are in test_site.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import polib
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import i18n  # noqa: E402


def catalog(*entries: polib.POEntry) -> polib.POFile:
    po = polib.POFile()
    for e in entries:
        po.append(e)
    return po


def test_merge_keeps_marks_fuzzy_and_retires_like_msgmerge() -> None:
    old = catalog(
        polib.POEntry(msgid="The mask hides the future.", msgstr="掩码遮住了未来。"),
        polib.POEntry(
            msgid="Each head attends in its own subspace.", msgstr="每个头在各自的子空间中关注。"
        ),
        polib.POEntry(msgid="A paragraph that was removed.", msgstr="一段被删去的文字。"),
    )
    template = catalog(
        polib.POEntry(msgid="The mask hides the future."),  # unchanged
        polib.POEntry(msgid="Each head attends in its own small subspace."),  # edited
        polib.POEntry(msgid="A new paragraph about padding."),  # new
        polib.POEntry(msgid="{doc}`12_masks`"),  # nothing to translate
    )
    merged = {e.msgid: e for e in i18n.merge(template, old) if not e.obsolete}
    kept = merged["The mask hides the future."]
    assert kept.msgstr == "掩码遮住了未来。" and "fuzzy" not in kept.flags
    edited = merged["Each head attends in its own small subspace."]
    assert edited.msgstr == "每个头在各自的子空间中关注。" and "fuzzy" in edited.flags
    assert edited.previous_msgid == "Each head attends in its own subspace."
    assert merged["A new paragraph about padding."].msgstr == ""
    assert merged["{doc}`12_masks`"].msgstr == "{doc}`12_masks`"
    obsolete = [e for e in i18n.merge(template, old) if e.obsolete]
    assert [e.msgid for e in obsolete] == ["A paragraph that was removed."]
    counted = i18n.counts(i18n.merge(template, old))
    assert counted == {"translated": 2, "untranslated": 1, "fuzzy": 1}


@pytest.mark.parametrize(
    ("msgid", "same"),
    [
        ("{doc}`01_sequences`", True),
        ("$S$, $T$", True),
        ("`(B, T, D)`", True),
        ("batch size", False),
        ("$x_t$, $h_t$ (or $S_t$)", False),
        ("References", False),
    ],
)
def test_only_references_math_and_code_need_no_translation(msgid: str, same: bool) -> None:
    assert i18n.needs_no_translation(msgid) is same


def test_docstrings_are_not_messages() -> None:
    """The API page's entries come from the code's docstrings: they stay English by rule."""
    entry = polib.POEntry(
        msgid="Multi-head scaled dot-product attention.",
        occurrences=[("../src/transformer_tutorial/multihead.py:docstring", ""), ("of", "")],
    )
    assert i18n.is_docstring(entry)
    assert not list(i18n.merge(catalog(entry), polib.POFile()))


@pytest.fixture(scope="module")
def templates() -> list[Path]:
    """The English messages of every page, from Sphinx's gettext builder over the stored
    notebooks (MyST-NB issue #587 broke this for .ipynb once: this fixture fails if it returns)."""
    return i18n.pot()


@pytest.mark.slow
def test_the_gettext_build_extracts_every_page(templates: list[Path]) -> None:
    from toc import toc_files

    pages = {str(t.relative_to(i18n.POT_DIR).with_suffix("")) for t in templates}
    expected = {f.rsplit(".", 1)[0] for f in toc_files()}
    assert expected <= pages, sorted(expected - pages)


def started(template: Path) -> bool:
    """A page whose catalog holds a translation written by a person (not only the messages
    that are the same in both languages)."""
    path = i18n.catalog_for(template)
    if not path.exists():
        return False
    return any(e.msgstr and e.msgstr != e.msgid and not e.obsolete for e in polib.pofile(str(path)))


@pytest.mark.slow
def test_every_translated_page_has_a_current_translation_of_every_paragraph(templates) -> None:
    """An English edit marks its message fuzzy (or new) in the page's catalog, and this fails
    until the Chinese is revised: `python tools/i18n.py update`, translate, commit both."""
    stale = {}
    for template in filter(started, templates):
        page = str(template.relative_to(i18n.POT_DIR).with_suffix(""))
        merged = i18n.merge(
            polib.pofile(str(template)), polib.pofile(str(i18n.catalog_for(template))), page
        )
        c = i18n.counts(merged)
        if c["untranslated"] or c["fuzzy"]:
            todo = [e.msgid[:60] for e in merged if not e.obsolete and (not e.msgstr or e.fuzzy)]
            stale[page] = (c, todo[:3])
    assert not stale, f"English without a current Chinese translation: {stale}"
    assert any(started(t) for t in templates), "no page of the Chinese edition is translated"


@pytest.mark.slow
def test_every_page_is_translated(templates: list[Path]) -> None:
    """A new page (a new chapter, a new appendix) cannot land without its Chinese."""
    missing = [str(t.relative_to(i18n.POT_DIR)) for t in templates if not started(t)]
    assert not missing, f"pages with no Chinese yet: {missing}"


def test_the_catalogs_are_what_the_tool_writes(tmp_path: Path) -> None:
    """Valid gettext files that msgfmt-compatible tools read: every catalog parses, declares
    its language and has no duplicate messages."""
    paths = sorted(i18n.LOCALE.rglob("*.po"))
    assert paths, "no catalogs under locale/: run `python tools/i18n.py update`"
    for path in paths:
        po = polib.pofile(str(path))
        assert po.metadata.get("Language") == i18n.LANGUAGE, path
        ids = [e.msgid for e in po if not e.obsolete]
        assert len(ids) == len(set(ids)), f"{path} has duplicate messages"
        po.save_as_mofile(str(tmp_path / "x.mo"))  # compiles, as Sphinx will compile it
        assert (tmp_path / "x.mo").stat().st_size > 0


def test_the_chinese_notebooks_are_up_to_date_and_run_the_english_code() -> None:
    """zh/book/*.ipynb, the notebooks the Chinese edition's Colab and download buttons open, are
    what tools/i18n.py writes from the English notebooks and the catalogs. Their code and stored
    outputs are the English ones, so nbval's checks hold for them too, with three differences: the
    first code cell ends by choosing Chinese figures, the opening diagram's outputs are drawn
    in Chinese (compared with a fresh drawing in test_every_chinese_diagram_is_stored_as_drawn),
    and the checker's verdicts are said in Chinese, as the checker says them there (the
    translation itself: tests/check/test_language.py); every other printed line stays."""
    import nbformat

    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "i18n.py"), "notebooks", "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for english in sorted((ROOT / "book").glob("[0-9]*.ipynb")):
        zh = nbformat.read(ROOT / "zh" / "book" / english.name, as_version=4)
        en = nbformat.read(english, as_version=4)
        assert [c.cell_type for c in zh.cells] == [c.cell_type for c in en.cells], english.name
        first = next(i for i, c in enumerate(en.cells) if c.cell_type == "code")
        diagram = i18n.diagram_cell(en)
        for i, (a, b) in enumerate(zip(zh.cells, en.cells, strict=True)):
            if a.cell_type != "code":
                continue
            if i == first:
                assert a.source == f"{b.source.rstrip()}\n\n{i18n.SET_LANGUAGE}", english.name
            else:
                assert a.source == b.source, english.name
            if i == diagram:
                assert len(a.outputs) == len(b.outputs), english.name
                assert all(o.metadata[i18n.DRAWN]["language"] == "zh_CN" for o in a.outputs)
            elif a.metadata.get(i18n.DRAWN, {}).get("outputs") == "verdicts":
                assert len(a.outputs) == len(b.outputs), english.name
                for zh_out, en_out in zip(a.outputs, b.outputs, strict=True):
                    verdicts = [
                        line
                        for line in zh_out.get("text", "").split("\n")
                        if line[:2] in ("✓ ", "✗ ")
                    ]
                    assert all(re.search("[\u4e00-\u9fff]", v) for v in verdicts), verdicts
                    others = [
                        line
                        for line in en_out.get("text", "").split("\n")
                        if line[:2] not in ("✓ ", "✗ ", "  ")
                    ]
                    assert all(line in zh_out.get("text", "") for line in others), english.name
            else:
                assert a.outputs == b.outputs, english.name


@pytest.fixture(scope="module")
def chinese_diagrams() -> dict[str, list[dict]]:
    """Every chapter's opening diagram drawn afresh in Chinese (about 40 s)."""
    return i18n.draw_diagrams(i18n.LANGUAGE)


@pytest.mark.slow
def test_every_chinese_diagram_is_stored_as_drawn(chinese_diagrams) -> None:
    """What the Chinese notebooks show differently from the English, checked as nbval checks a
    stored output: each opening diagram, redrawn in Chinese, draws the same texts (its labels,
    in order) on a figure of the same size as the one stored in zh/book/."""
    import nbformat

    assert len(chinese_diagrams) == 20, sorted(chinese_diagrams)
    for page, outputs in chinese_diagrams.items():
        stored = i18n.stored_diagrams(ROOT / "zh" / "book" / page)
        assert stored is not None, f"zh/book/{page} has no Chinese diagram"
        assert len(stored) == len(outputs), page
        for old, new in zip(stored, outputs, strict=True):
            old = nbformat.from_dict(old)
            assert old.metadata[i18n.DRAWN] == new["metadata"][i18n.DRAWN], page
            assert old.metadata["image/png"] == new["metadata"]["image/png"], page
            assert old.data["text/plain"] == new["data"]["text/plain"], page


@pytest.mark.slow
def test_every_diagram_label_is_drawn_in_chinese(chinese_diagrams) -> None:
    """Every label with English words is a translation from the diagrams' catalog (which may
    keep a name, a code expression or an example sentence as it is), and every opening diagram
    has Chinese in it."""
    table = i18n.language_catalog()
    translations = set(table.values())
    for page, outputs in chinese_diagrams.items():
        labels = [label for o in outputs for label in o["metadata"][i18n.DRAWN]["labels"]]
        english = [
            label
            for label in labels
            if re.search("[A-Za-z]{2,}", re.sub(r"\$[^$]*\$", " ", label))
            and label not in translations
        ]
        assert not english, (
            f"{page}: labels with no translation in {i18n.DIAGRAMS_PO.name}: {english}"
        )
        assert any(re.search("[\u4e00-\u9fff]", label) for label in labels), page


def test_the_diagrams_catalog_is_complete_and_read_by_the_package() -> None:
    from transformer_tutorial.language import read_po

    catalog = polib.pofile(str(i18n.DIAGRAMS_PO))
    assert i18n.counts(catalog) == {"translated": len(i18n.live(catalog)), "untranslated": 0,
                                    "fuzzy": 0}  # fmt: skip
    assert read_po(i18n.DIAGRAMS_PO) == {e.msgid: e.msgstr for e in i18n.live(catalog)}
    found = [f"{e.msgid!r}: {v} (use {s})" for e in i18n.live(catalog)
             for v, s in VARIANTS if re.search(v, e.msgstr)]  # fmt: skip
    assert not found, found


def test_a_diagram_is_drawn_in_the_language_chosen(monkeypatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from transformer_tutorial import language
    from transformer_tutorial.diagrams import box, diagram, labels
    from transformer_tutorial.plotting import use_book_style

    use_book_style()  # the Chinese font, where one is installed

    texts = {}
    for choice in ("en", "zh_CN"):
        language.set_language(choice)
        try:
            fig, ax = diagram(title="causal mask")
            box(ax, (3, 3), "padding mask")
            fig.canvas.draw()
            texts[choice] = sorted(labels(fig))
            assert repr(fig).startswith("<Figure size"), repr(fig)
            plt.close(fig)
        finally:
            language.set_language(None)
    assert texts["en"] == ["causal mask", "padding mask"]
    assert texts["zh_CN"] == ["因果掩码", "填充掩码"]
    monkeypatch.setenv(language.ENVIRONMENT_VARIABLE, "zh")
    assert language.language() == "zh_CN" and language.translate("causal mask") == "因果掩码"
    monkeypatch.delenv(language.ENVIRONMENT_VARIABLE)
    assert language.language() == "en" and language.translate("causal mask") == "causal mask"


def test_a_translated_notebook_has_its_prose_in_chinese() -> None:
    """The page the preface links first, translated, comes out Chinese block by block."""
    nb, done, missed = i18n.chinese_notebook(ROOT / "book" / "06_attention_scoring.ipynb")
    assert done > 30 and not missed, missed[:3]
    first = next(c for c in nb.cells if c.cell_type == "markdown")
    assert re.match(r"# 6\\?\. ", first.source), first.source[:40]  # "6\." keeps it a title
    assert re.search("[\u4e00-\u9fff]{10}", first.source)


# Variants that Chinese texts use for a concept the glossary names otherwise: the Chinese edition
# uses the glossary's term (that of 《动手学深度学习》 where it has one), one term per concept.
# the variants no Chinese text may use, from the term list (locale/zh_CN/terms.yml), the one
# source: tests/book/test_zh_prose.py checks the pages, the glossary and the checker with it too
TERMS = yaml.safe_load((ROOT / "locale" / "zh_CN" / "terms.yml").read_text(encoding="utf-8"))
VARIANTS = [(v, t["zh"]) for t in TERMS["terms"] for v in t.get("variants", [])]


def test_with_no_translation_a_notebook_comes_back_as_written() -> None:
    """Every Markdown cell of every notebook survives the unit-by-unit rewrite unchanged when no
    unit has a translation (lists, quotes, fences, tables and directives included)."""
    import nbformat

    md = i18n.myst_parser()
    for page in sorted((ROOT / "book").glob("[0-9]*.ipynb")):
        for cell in nbformat.read(page, as_version=4).cells:
            if cell.cell_type == "markdown":
                assert i18n.translate_markdown(cell.source, {}, md)[0] == cell.source, page.name


PAGES = sorted(p.name for p in (ROOT / "book").glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("page", PAGES)
def test_no_english_unit_is_left_in_a_chinese_notebook(page: str) -> None:
    """Every heading, paragraph, list item, table cell, definition, admonition title and body and
    caption of the page's Markdown, as MyST parses it, has its Chinese in the Chinese notebook."""
    nb, done, missed = i18n.chinese_notebook(ROOT / "book" / page)
    assert not missed, f"{len(missed)} unit(s) left English: {missed[:3]}"
    assert done, "no unit translated"


def test_the_units_are_those_that_myst_parses() -> None:
    """What MyST reads as one unit is translated as one, where a line-based reading goes wrong:
    a list that interrupts a paragraph, a quotation, a table inside an admonition, an admonition's
    title, a list item's continuation lines and a definition."""
    src = (
        "# 2\\. A title\n\n"
        "A paragraph\nover two lines:\n- an item\n  continued\n- `code` item\n\n"
        "> A quoted line\n> and its end.\n\n"
        "```{admonition} The answer\n:class: dropdown\n\nInside it.\n\n"
        "| head | 1 |\n|---|---|\n| row `a|b` | 2 |\n```\n\n"
        "```python\nprint('code stays')\n```\n\n"
        "Term\n: its definition\n"
    )
    table = {
        "2\\. A title": "2\\. 标题",
        "A paragraph over two lines:": "一段跨两行的文字：",
        "an item continued": "一项，接着写",
        "A quoted line and its end.": "引用的一行和它的结尾。",
        "The answer": "答案",
        "Inside it.": "在里面。",
        "head": "表头",
        "Term": "术语",
        "its definition": "它的定义",
    }
    out, done, missed = i18n.translate_markdown(src, table)
    assert done == len(table), out
    assert missed == ["`code` item", "row `a"], missed
    assert out.startswith("# 2\\. 标题\n\n一段跨两行的文字：\n- 一项，接着写\n- `code` item\n\n")
    assert "> 引用的一行和它的结尾。\n\n```{admonition} 答案\n:class: dropdown\n\n在里面。" in out
    assert "| 表头 | 1 |\n|---|---|\n| row `a|b` | 2 |\n```" in out
    assert "print('code stays')" in out and out.endswith("术语\n: 它的定义\n")


def test_the_chinese_config_is_the_english_one_with_the_language_set() -> None:
    import yaml

    english = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    chinese = yaml.safe_load(i18n.zh_config().read_text(encoding="utf-8"))
    assert chinese["sphinx"]["config"]["language"] == i18n.LANGUAGE
    assert chinese["repository"]["path_to_book"] == "zh"
    assert re.search("[\u4e00-\u9fff]", chinese["title"])
    for folder in chinese["sphinx"]["local_extensions"].values():
        assert Path(folder).is_absolute() and Path(folder).is_dir()
    same = {k: v for k, v in chinese.items() if k not in ("title", "repository", "sphinx")}
    assert same == {k: v for k, v in english.items() if k in same}
    assert set(english["sphinx"]["config"]) < set(chinese["sphinx"]["config"])


def test_a_chapter_named_in_a_chinese_sentence_reads_as_chinese() -> None:
    """``在第 {doc}`07_bahdanau` 章中`` renders as "在第 7. Bahdanau 注意力：…… 章中": a bare
    reference shows the page's numbered title. Inside a sentence a Chinese message names the page
    as Chinese does, ``{doc}`第 7 章 <07_bahdanau>``` (solutions: 第 7 章参考答案; an appendix page:
    附录「its title」), one wording everywhere. The rendered pages are checked in test_site.py."""
    found = []
    for path in sorted(i18n.LOCALE.rglob("*.po")):
        for entry in polib.pofile(str(path)):
            if not entry.obsolete and entry.msgstr:
                found += [
                    f"{path.stem}: {p}" for p in i18n.chapter_reference_problems(entry.msgstr)
                ]
    assert not found, f"{len(found)} chapter reference(s): {found[:5]}"


@pytest.mark.parametrize(
    ("msgstr", "ok"),
    [
        ("在第 {doc}`07_bahdanau` 章中", False),
        ("{doc}`13_transformer` 的 `EncoderLayer`", False),
        ("在{doc}`第 7 章 <07_bahdanau>`中", True),
        ("在{doc}`第 8 章 <07_bahdanau>`中", False),  # the number must be the page's
        ("见{doc}`第 16 章参考答案 <16_translator_solutions>`中的练习 1", True),
        ("见{doc}`第 16 章 <16_translator_solutions>`", False),
        ("{doc}`16_recorded_runs`检验了", False),
        ("{doc}`04_seq2seq`, {doc}`13_transformer`", True),  # a table cell of titles
    ],
)
def test_the_chapter_reference_rule(msgstr: str, ok: bool) -> None:
    assert (not i18n.chapter_reference_problems(msgstr)) is ok
