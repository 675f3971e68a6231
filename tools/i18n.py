"""The Chinese edition: gettext catalogs of the book's prose, and the Chinese build.

    python tools/i18n.py pot            # the English messages (.pot), one file per page
    python tools/i18n.py update         # merge them into locale/zh_CN/LC_MESSAGES/book/*.po
    python tools/i18n.py stats [--check] # translated / untranslated / fuzzy, page by page
    python tools/i18n.py build          # the Chinese HTML edition into _build/html/zh/
    python tools/i18n.py notebooks      # the runnable Chinese notebooks, zh/book/*.ipynb
    python tools/i18n.py diagrams       # the opening diagrams' labels into their catalog
    python tools/i18n.py todo book/01_sequences todo.json   # what is left to translate
    python tools/i18n.py apply todo.json                    # ... and back, once translated

The prose of each page (every heading, paragraph, list item, admonition, caption and table
cell of its Markdown cells) is one gettext message, keyed by the English text; code cells,
outputs and figures are shared with the English edition and are not messages. The catalogs in
``locale/`` are standard ``.po`` files that Poedit, Weblate or Crowdin open as they are; they are
the one source of the Chinese text. Sphinx's own gettext builder writes the messages and Sphinx's
own i18n reads the translations back (``locale_dirs`` and ``language`` in the build's config), so
the Chinese pages are built from the same notebooks as the English ones.

``update`` works like GNU ``msgmerge``: a message that is new gets an empty translation; a message
whose English changed keeps its old translation marked *fuzzy* (with the old English as
``#| msgid``), so the translator sees what to revise; messages that are gone become obsolete
(``#~``). A fuzzy or empty translation is not used in the build and fails ``stats --check``, which
``make test`` runs: an English edit cannot land without its Chinese.

Messages written by autodoc from the package's docstrings (the API reference page) are code
documentation and stay English by rule; ``stats`` does not count them.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import polib

ROOT = Path(__file__).resolve().parents[1]
LANGUAGE = "zh_CN"
GETTEXT_BUILD = ROOT / "_build" / "gettext-build"  # its own doctrees: they differ by builder
POT_DIR = GETTEXT_BUILD / "_build" / "gettext"
LOCALE = ROOT / "locale" / LANGUAGE / "LC_MESSAGES"
ZH_CONFIG = ROOT / "_build" / f"_config.{LANGUAGE}.yml"
ZH_SITE = ROOT / "_build" / "html" / "zh"
FUZZY_RATIO = 0.7  # how alike an old and a new English message must be to carry a translation


def jupyter_book() -> str:
    here = Path(sys.executable).parent / "jupyter-book"
    return str(here) if here.exists() else "jupyter-book"


def is_docstring(entry: polib.POEntry) -> bool:
    """A message that autodoc took from the package's code (stays English by rule)."""
    # "#: src/x.py:docstring of x.f:1" (polib splits the reference at its spaces)
    return any("docstring" in f"{path}:{line}" for path, line in entry.occurrences)


# What is the same in both languages: cross-references, math, code, links.
_SAME_IN_BOTH = re.compile(r"\{[a-z:]+\}`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|``?[^`]*``?|https?://\S+")


def glossary_terms() -> set[str]:
    """The English and Chinese cells of the glossary's table: in the Chinese glossary the English
    term is the thing glossed, so it stays as it is (the Chinese beside it is the translation)."""
    path = ROOT / "book" / "glossary.md"
    if not path.exists():
        return set()
    rows = [line.split("|")[1:3] for line in path.read_text(encoding="utf-8").splitlines()]
    return {cell.strip() for row in rows if len(row) == 2 for cell in row}


def needs_no_translation(msgid: str, page: str = "") -> bool:
    """A message with no English words once references, math and code are removed, such as
    ``{doc}`01_sequences``` or ``$B$``, or Chinese with no English sentence in it (a quotation of
    the notes), or a term of the glossary's table: its translation is itself."""
    if page.endswith("glossary") and msgid in glossary_terms():
        return True
    rest = _SAME_IN_BOTH.sub(" ", msgid)
    if re.search("[\u4e00-\u9fff]", rest):
        return not re.search(r"[A-Za-z]{2,}(?:[ ,;:]+[A-Za-z'-]{2,}){3}", rest)
    return not re.search(r"[A-Za-z]{2,}", rest)


# A chapter named inside a Chinese sentence: ``{doc}`07_bahdanau``` alone would render the page's
# numbered title ("7. Bahdanau 注意力：……") in the middle of the sentence, so a Chinese message
# gives the link its own text, ``{doc}`第 7 章 <07_bahdanau>```. A message that is nothing but
# references (a table's column of chapters) keeps the titles, as a list of contents does.
CHAPTER_REF = re.compile(r"\{doc\}`(?:([^`<]*?)\s*<)?(\d\d_[0-9a-z_]+)>?`")


def reference_label(target: str) -> str:
    """The link text of a page named in a Chinese sentence: 第 7 章, 第 7 章参考答案 (its
    solutions), or 附录「title」 for an appendix page (its Chinese title, from its catalog)."""
    number, rest = int(target[:2]), target[3:]
    if rest.endswith("solutions"):
        return f"第 {number} 章参考答案"
    if (ROOT / "book" / f"{target}.ipynb").exists() and f"book/{target}" not in _chapters():
        po = LOCALE / "book" / f"{target}.po"
        title = next(e.msgstr for e in polib.pofile(str(po)) if not e.obsolete)
        return f"附录「{title}」"
    return f"第 {number} 章"


def _chapters() -> set[str]:
    """The pages that the table of contents lists as chapters (not as their sections)."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc.get("parts", []) for c in part.get("chapters", [])]
    return {f.rsplit(".", 1)[0] for f in files}


def chapter_reference_problems(msgstr: str) -> list[str]:
    """What is wrong with the chapter references of a Chinese message (empty when nothing)."""
    refs = list(CHAPTER_REF.finditer(msgstr))
    if not refs or not CHAPTER_REF.sub("", msgstr).strip(" ,，、;；"):
        return []  # no reference, or only references (a column of titles)
    problems = []
    for m in refs:
        text, target = m.group(1), m.group(2)
        expected = reference_label(target)
        if text is None:
            problems.append(f"{m.group(0)} renders its English-numbered title in a sentence: "
                            f"write {{doc}}`{expected} <{target}>`")  # fmt: skip
        elif text != expected:
            problems.append(f"{m.group(0)}: the link text for {target} is {expected!r}")
    return problems


def norm(s: str) -> str:
    """A message as gettext keys it: whitespace runs as one space."""
    return re.sub(r"\s+", " ", s).strip()


def myst_parser():
    """markdown-it with MyST's own rules and the book's extensions (``parse:`` in _config.yml):
    the parser that Sphinx reads the Markdown cells with."""
    import yaml
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = set(config.get("parse", {}).get("myst_enable_extensions", []))
    return create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML)


# Directives whose body is not Markdown prose (code, math, reStructuredText, data).
_LITERAL_DIRECTIVES = {"code", "code-block", "code-cell", "sourcecode", "math", "eval-rst", "raw",
                       "bibliography", "literalinclude", "include", "csv-table", "mermaid",
                       "toctree", "glue", "glue:any", "glue:figure"}  # fmt: skip
# Directives whose argument is a title (a message of its own), not a path or a name.
_TITLED_DIRECTIVES = {"admonition", "dropdown", "topic", "sidebar", "card", "tab-item", "margin",
                      "exercise", "solution"}  # fmt: skip


def _split_row(line: str) -> list[tuple[int, int]]:
    """The spans of a table row's cells, split at unescaped pipes as markdown-it splits them."""
    bars = [i for i, ch in enumerate(line) if ch == "|" and (i == 0 or line[i - 1] != "\\")]
    stripped = line.strip()
    start = line.index(stripped) if stripped else 0
    edges = [-1 if not bars or bars[0] != start else bars.pop(0)]
    end = start + len(stripped)
    spans = []
    for bar in bars:
        if bar == end - 1:
            break
        spans.append((edges[-1] + 1, bar))
        edges.append(bar)
    spans.append((edges[-1] + 1, end if not stripped.endswith("|") else end - 1))
    return spans


class _Translation:
    """One Markdown text translated unit by unit (see :func:`translate_markdown`)."""

    def __init__(self, table: dict[str, str], md) -> None:
        self.table, self.md = table, md
        self.done, self.missed = 0, []

    def lookup(self, text: str) -> str | None:
        key = norm(text)
        if not key:
            return None
        found = self.table.get(key)
        if found is not None and found != key:
            self.done += 1
            return found
        if found is None and not needs_no_translation(key):
            self.missed.append(key)
        return None

    def text(self, src: str) -> str:
        lines = src.split("\n")
        edits: list[tuple[int, int, list[str]]] = []  # replace lines[a:b] with the list
        tokens = self.md.parse(src)
        in_row = False
        for i, token in enumerate(tokens):
            if token.type == "tr_open":
                in_row = True
                edits.append(self.row(lines, token.map[0], tokens, i))
            elif token.type == "tr_close":
                in_row = False
            elif token.type in ("fence", "colon_fence") and token.info.startswith("{"):
                edits += self.directive(lines, token)
            elif token.type == "inline" and not in_row and token.map:
                edit = self.block(lines, token)
                if edit:
                    edits.append(edit)
        for a, b, new in sorted((e for e in edits if e), reverse=True):
            lines[a:b] = new
        return "\n".join(lines)

    def block(self, lines: list[str], token) -> tuple[int, int, list[str]] | None:
        """A heading, paragraph, list item's or definition's text, quoted or not."""
        new = self.lookup(token.content)
        if new is None:
            return None
        a = token.map[0]
        content = token.content.split("\n")
        first, last = content[0], content[-1]
        at = lines[a].find(first)
        prefix = lines[a][:at] if at >= 0 else ""
        end_line = a + len(content) - 1
        tail = lines[end_line][lines[end_line].rfind(last) + len(last) :] if last else ""
        if prefix.lstrip().startswith("#") or not re.sub(r"[\s>]", "", prefix):
            continuation = prefix if ">" in prefix else ""
        else:
            continuation = " " * len(prefix)
        out = [prefix + part if n == 0 else continuation + part
               for n, part in enumerate(new.split("\n"))]  # fmt: skip
        out[-1] += tail
        return a, end_line + 1, out

    def row(self, lines: list[str], a: int, tokens, i: int) -> tuple[int, int, list[str]]:
        line = lines[a]
        spans = _split_row(line)
        cells = []
        for token in tokens[i + 1 :]:
            if token.type == "tr_close":
                break
            if token.type == "inline":
                cells.append(token.content)
        out = line
        for (s, e), content in reversed(list(zip(spans, cells, strict=False))):
            new = self.lookup(content)
            if new is not None:
                out = f"{out[:s]} {new} {out[e:]}"
        return a, a + 1, [out]

    def directive(self, lines: list[str], token) -> list[tuple[int, int, list[str]]]:
        """A directive's title (its argument) and, unless it holds code or math, its body."""
        name = token.info[1:].split("}", 1)[0]
        argument = token.info.split("}", 1)[1].strip() if "}" in token.info else ""
        a, b = token.map
        edits = []
        if argument and name in _TITLED_DIRECTIVES:
            new = self.lookup(argument)
            if new is not None:
                edits.append((a, a + 1, [lines[a].replace(argument, new, 1)]))
        if name in _LITERAL_DIRECTIVES:
            return edits
        end = b - 1 if b - 1 > a and lines[b - 1].strip().startswith(token.markup) else b
        body = lines[a + 1 : end]
        indent = len(lines[a]) - len(lines[a].lstrip())
        body = [line[indent:] for line in body]
        start = 0  # the options (":class: tip", or a YAML block) stay as they are
        if body and body[0].strip() == "---":
            start = next((k + 1 for k in range(1, len(body)) if body[k].strip() == "---"), 0)
        while start < len(body) and re.match(r"^:[\w-]+:", body[start]):
            start += 1
        new_body = self.text("\n".join(body[start:])).split("\n")
        if new_body != body[start:]:
            edits.append((a + 1 + start, end, [" " * indent + line if line else line
                                               for line in new_body]))  # fmt: skip
        return edits


def translate_markdown(src: str, table: dict[str, str], md=None) -> tuple[str, int, list[str]]:
    """A Markdown cell with each unit that Sphinx makes a message of (heading, paragraph, list
    item, table cell, definition, admonition title and body, caption) replaced by its
    translation: (new source, units translated, units left English). The units are found by
    MyST's own parser (markdown-it with MyST's rules), so they are the messages of the catalog;
    code, math, targets and directive options are kept as written."""
    t = _Translation(table, md or myst_parser())
    return t.text(src), t.done, t.missed


def pot() -> list[Path]:
    """Run Sphinx's gettext builder over the book; return the templates, one per page."""
    shutil.rmtree(POT_DIR, ignore_errors=True)
    subprocess.run(
        [jupyter_book(), "build", str(ROOT), "--builder", "custom", "--custom-builder",
         "gettext", "--path-output", str(GETTEXT_BUILD), "--quiet"],
        check=True, cwd=ROOT,
    )  # fmt: skip
    templates = sorted(POT_DIR.rglob("*.pot"))
    if not templates:
        raise SystemExit(f"the gettext build wrote no .pot files under {POT_DIR}")
    return templates


def myst_safe(msgid: str, msgstr: str) -> str:
    """A translation as MyST must read it when Sphinx parses it in place of the English: a title
    "1. Sequences as data" translated "1. 作为数据的序列" would parse as a numbered list and be
    dropped, so its number's period is escaped ("1\\. ..."), which renders as "1."."""
    if re.match(r"^\d+\. ", msgid) and re.match(r"^\d+\. ", msgstr):
        return re.sub(r"^(\d+)\. ", r"\1\\. ", msgstr)
    return msgstr


def catalog_for(template: Path) -> Path:
    return LOCALE / template.relative_to(POT_DIR).with_suffix(".po")


def merge(template: polib.POFile, catalog: polib.POFile, page: str = "") -> polib.POFile:
    """``catalog`` brought up to ``template``'s messages, as ``msgmerge`` would."""
    old = {e.msgid: e for e in catalog if e.msgid and not e.obsolete}
    merged = polib.POFile(wrapwidth=0)
    merged.metadata = catalog.metadata or {
        "Project-Id-Version": "How Transformers Really Work",
        "Language": LANGUAGE,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "Plural-Forms": "nplurals=1; plural=0;",
    }
    used = set()
    unmatched_old = [e for e in old.values()]
    for entry in template:
        if not entry.msgid or is_docstring(entry):
            continue
        where = [(path.lstrip("./"), line) for path, line in entry.occurrences]  # book/x.md
        new = polib.POEntry(msgid=entry.msgid, occurrences=where)
        if entry.msgid in old:
            kept = old[entry.msgid]
            new.msgstr, new.flags = myst_safe(entry.msgid, kept.msgstr), list(kept.flags)
            new.previous_msgid = kept.previous_msgid
            new.tcomment = kept.tcomment
            used.add(entry.msgid)
        else:
            best, ratio = None, FUZZY_RATIO
            for candidate in unmatched_old:
                if candidate.msgid in used or not candidate.msgstr:
                    continue
                r = difflib.SequenceMatcher(None, candidate.msgid, entry.msgid).quick_ratio()
                if r > ratio:
                    r = difflib.SequenceMatcher(None, candidate.msgid, entry.msgid).ratio()
                    if r > ratio:
                        best, ratio = candidate, r
            if best is not None:
                new.msgstr, new.flags = best.msgstr, ["fuzzy"]
                new.previous_msgid = best.msgid
                used.add(best.msgid)
        if not new.msgstr and needs_no_translation(entry.msgid, page):
            new.msgstr = entry.msgid
        merged.append(new)
    for msgid, entry in old.items():
        if msgid not in used and entry.msgstr:
            gone = polib.POEntry(msgid=msgid, msgstr=entry.msgstr, obsolete=True)
            merged.append(gone)
    return merged


def update() -> None:
    for template in pot():
        path = catalog_for(template)
        catalog = polib.pofile(str(path), wrapwidth=0) if path.exists() else polib.POFile()
        page = str(template.relative_to(POT_DIR).with_suffix(""))
        merged = merge(polib.pofile(str(template), wrapwidth=0), catalog, page)
        path.parent.mkdir(parents=True, exist_ok=True)
        merged.save(str(path))
        print(f"{path.relative_to(ROOT)}: {counts(merged)}")
    update_diagrams()
    notebooks(check=False)


def counts(catalog: polib.POFile) -> dict[str, int]:
    """Translated, untranslated and fuzzy prose messages (docstrings not counted)."""
    entries = [e for e in catalog if e.msgid and not e.obsolete and not is_docstring(e)]
    fuzzy = sum("fuzzy" in e.flags for e in entries)
    empty = sum(not e.msgstr for e in entries)
    return {"translated": len(entries) - fuzzy - empty, "untranslated": empty, "fuzzy": fuzzy}


def stats(check: bool) -> int:
    """Print the state of every catalog; with ``check``, fail on any message not translated."""
    templates = sorted(POT_DIR.rglob("*.pot")) if POT_DIR.exists() else []
    if check or not templates:
        templates = pot()
    missing, bad = [], []
    for template in templates:
        path = catalog_for(template)
        page = str(template.relative_to(POT_DIR).with_suffix(""))
        if not path.exists():
            missing.append(page)
            continue
        merged = merge(polib.pofile(str(template)), polib.pofile(str(path)), page)
        c = counts(merged)
        print(f"{page}: {c['translated']} translated, {c['untranslated']} untranslated, "
              f"{c['fuzzy']} fuzzy")  # fmt: skip
        if c["untranslated"] or c["fuzzy"]:
            bad.append(page)
    if DIAGRAMS_PO.exists():  # the opening diagrams' labels
        c = counts(polib.pofile(str(DIAGRAMS_PO)))
        print(f"diagrams: {c['translated']} translated, {c['untranslated']} untranslated, "
              f"{c['fuzzy']} fuzzy")  # fmt: skip
        if c["untranslated"] or c["fuzzy"]:
            bad.append("diagrams")
    else:
        missing.append("diagrams")
    if missing:
        print(f"no catalog yet: {', '.join(missing)}")
    if check and (bad or missing):
        print(
            f"{len(bad) + len(missing)} page(s) have English without a current Chinese: run "
            "`python tools/i18n.py update`, translate the empty and fuzzy messages in "
            f"locale/{LANGUAGE}/LC_MESSAGES/ (remove the fuzzy flag once revised), and commit both."
        )
        return 1
    return 0


def catalog_of(page: str) -> Path:
    path = LOCALE / f"{page.removesuffix('.po')}.po"
    if not path.exists():
        raise SystemExit(f"no catalog {path.relative_to(ROOT)}: run `python tools/i18n.py update`")
    return path


def todo(page: str, out: Path) -> None:
    """The messages of ``page`` still to translate (empty or fuzzy), as JSON for a translator:
    ``[{"msgid": English, "msgstr": "", "previous": the old English of a fuzzy one}, ...]``."""
    catalog = polib.pofile(str(catalog_of(page)), wrapwidth=0)
    items = [
        {"msgid": e.msgid, "msgstr": e.msgstr, "previous": e.previous_msgid or ""}
        for e in catalog
        if not e.obsolete and (not e.msgstr or "fuzzy" in e.flags)
    ]
    out.write_text(json.dumps({"page": page, "messages": items}, ensure_ascii=False, indent=1))
    print(f"{len(items)} message(s) of {page} to translate in {out}")


def apply(path: Path) -> None:
    """Put the translations of a ``todo`` file into its page's catalog (fuzzy flags cleared)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    catalog_path = catalog_of(data["page"])
    catalog = polib.pofile(str(catalog_path), wrapwidth=0)
    by_id = {e.msgid: e for e in catalog if not e.obsolete}
    done = 0
    for item in data["messages"]:
        entry = by_id.get(item["msgid"])
        if entry is None or not item["msgstr"].strip():
            continue
        entry.msgstr = myst_safe(entry.msgid, item["msgstr"])
        entry.flags = [f for f in entry.flags if f != "fuzzy"]
        entry.previous_msgid = None
        done += 1
    catalog.save(str(catalog_path))
    print(f"{catalog_path.relative_to(ROOT)}: {done} translation(s) applied; {counts(catalog)}")


# --- the opening diagram of every chapter, drawn in Chinese ----------------------------------------
#
# A chapter's opening diagram (its first code cell that calls ``diagram(``) is drawn by
# transformer_tutorial.diagrams, whose labels are written in English and looked up, in Chinese, in
# the catalog DIAGRAMS_PO (a gettext catalog like the pages', shipped inside the package so that a
# reader's own run finds it). The Chinese notebooks store that cell's outputs drawn in Chinese,
# with the labels drawn in the output's metadata; the Chinese build shows those outputs
# (_ext/chinese_diagrams.py), and a test redraws every one and compares its labels.

DIAGRAMS_PO = ROOT / "src" / "transformer_tutorial" / "locale" / LANGUAGE / "LC_MESSAGES"
DIAGRAMS_PO = DIAGRAMS_PO / "diagrams.po"
DRAWN = "transformer_tutorial"  # the key of a Chinese diagram output's metadata
# The first line of a Chinese notebook's first code cell: its figures are drawn in Chinese.
SET_LANGUAGE = (
    "# 中文版：本书的图用中文绘制\n"
    f'from transformer_tutorial.language import set_language; set_language("{LANGUAGE}")'
)


def live(catalog: polib.POFile) -> list[polib.POEntry]:
    return [e for e in catalog if e.msgid and not e.obsolete]


def language_catalog() -> dict[str, str]:
    """The diagrams' catalog as the package reads it: {English label: Chinese label}."""
    from transformer_tutorial.language import read_po

    return read_po(DIAGRAMS_PO)


def diagram_cell(nb: nbformat.NotebookNode) -> int | None:
    """The index of the chapter's opening diagram: its first code cell that draws a diagram."""
    return next(
        (i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "diagram(" in c.source),
        None,
    )


def _draw(language: str, out: Path, pages: list[Path]) -> None:
    """(Run in its own process.) Each page's code cells up to its opening diagram, in
    ``language``; write {page: [output, ...]} with the diagram cell's figures as nbformat
    outputs (retina PNGs, as the notebooks store them) and the labels each figure drew."""
    import base64
    import os

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from IPython.core.inputtransformer2 import TransformerManager
    from IPython.core.pylabtools import retina_figure

    from transformer_tutorial.diagrams import labels as diagram_labels
    from transformer_tutorial.language import set_language

    transform, drawn = TransformerManager(), {}
    for page in pages:
        nb = nbformat.read(page, as_version=4)
        last = diagram_cell(nb)
        if last is None:
            continue
        namespace = {"__name__": "__main__"}
        here = os.getcwd()
        os.chdir(page.parent)
        try:
            set_language(language)
            for cell in nb.cells[: last + 1]:
                if cell.cell_type == "code":
                    plt.close("all")  # the diagram cell's own figures are the ones kept
                    code = compile(transform.transform_cell(cell.source), str(page), "exec")
                    exec(code, namespace)  # noqa: S102 -- the book's own notebooks
        finally:
            os.chdir(here)
        outputs = []
        for number in plt.get_fignums():
            fig = plt.figure(number)
            png, size = retina_figure(fig)
            labels = [label for label in diagram_labels(fig) if label.strip()]
            outputs.append(
                {
                    "output_type": "display_data",
                    "data": {
                        "image/png": base64.b64encode(png).decode("ascii"),
                        "text/plain": repr(fig),
                    },
                    "metadata": {
                        "image/png": size,
                        DRAWN: {"language": language, "labels": labels},
                    },
                }
            )
        plt.close("all")
        drawn[page.name] = outputs
    out.write_text(json.dumps(drawn, ensure_ascii=False), encoding="utf-8")


def draw_diagrams(language: str, pages: list[Path] | None = None) -> dict[str, list[dict]]:
    """Every chapter's opening diagram drawn in ``language``, in a fresh Python process."""
    import tempfile

    pages = pages or sorted((ROOT / "book").glob("[0-9]*.ipynb"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "drawn.json"
        subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "_draw", language, str(out),
             *map(str, pages)],
            check=True, cwd=ROOT,
        )  # fmt: skip
        return json.loads(out.read_text(encoding="utf-8"))


def diagram_messages(drawn: dict[str, list[dict]]) -> polib.POFile:
    """The labels of the English diagrams that have words to translate, as a template."""
    template, seen = polib.POFile(wrapwidth=0), {}
    for page, outputs in drawn.items():
        for output in outputs:
            for label in output["metadata"][DRAWN]["labels"]:
                if not re.search("[A-Za-z]{2,}", re.sub(r"\$[^$]*\$", " ", label)):
                    continue  # a number, a letter or a formula
                if label in seen:
                    seen[label].occurrences.append((f"book/{page}", ""))
                    continue
                seen[label] = polib.POEntry(msgid=label, occurrences=[(f"book/{page}", "")])
                template.append(seen[label])
    return template


def update_diagrams(drawn: dict[str, list[dict]] | None = None) -> polib.POFile:
    """Merge the English diagrams' labels into DIAGRAMS_PO, as ``update`` does for the pages."""
    template = diagram_messages(drawn or draw_diagrams("en"))
    path = DIAGRAMS_PO
    catalog = polib.pofile(str(path), wrapwidth=0) if path.exists() else polib.POFile()
    merged = merge(template, catalog)
    path.parent.mkdir(parents=True, exist_ok=True)
    merged.save(str(path))
    print(f"{path.relative_to(ROOT)}: {counts(merged)}")
    return merged


ZH_NOTEBOOKS = ROOT / "zh" / "book"


def chinese_notebook(
    page: Path, drawn: list[dict] | None = None
) -> tuple[nbformat.NotebookNode, int, list[str]]:
    """The notebook ``page`` with its Markdown in Chinese from the page's catalog, its first code
    cell choosing Chinese figures (:data:`SET_LANGUAGE`, after the install lines) and its opening
    diagram's outputs those ``drawn`` in Chinese (kept as the English ones when not given); every
    other code cell and output untouched (so nbval's checks hold for it as for the English one)."""
    nb = nbformat.read(page, as_version=4)
    po_path = LOCALE / "book" / f"{page.stem}.po"
    table = {}
    if po_path.exists():
        table = {norm(e.msgid): e.msgstr for e in polib.pofile(str(po_path)) if e.msgstr
                 and not e.obsolete and "fuzzy" not in e.flags}  # fmt: skip
    done, missed, md = 0, [], myst_parser()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source, d, m = translate_markdown(cell.source, table, md)
            done, missed = done + d, missed + m
    first = next((c for c in nb.cells if c.cell_type == "code"), None)
    if first is not None:
        first.source = f"{first.source.rstrip()}\n\n{SET_LANGUAGE}"
    index = diagram_cell(nb)
    if index is not None and drawn is not None:
        nb.cells[index].outputs = [nbformat.from_dict(o) for o in drawn]
    said_in_chinese(nb)
    nb.metadata["language"] = "zh-CN"
    return nb, done, missed


def said_in_chinese(nb: nbformat.NotebookNode) -> int:
    """The checker's verdicts among the stored outputs (``✓ block: ...`` / ``✗ block: ...``),
    said as the checker says them in Chinese, which is what the Chinese notebook prints when it
    runs (its first cell sets the language); the cell is marked, so that the Chinese edition
    shows these outputs too (_ext/chinese_diagrams.py). Returns how many cells changed."""
    from transformer_tutorial.check import families, set_language

    set_language(LANGUAGE)
    changed = 0
    try:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            said = False
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream" and re.search(
                    r"^[✓✗] ", output.text, re.M
                ):
                    output.text = families.verdicts_said_again(output.text)
                    said = True
            if said:
                cell.metadata[DRAWN] = {"language": LANGUAGE, "outputs": "verdicts"}
                changed += 1
    finally:
        set_language("en")
    return changed


def stored_diagrams(target: Path) -> list[dict] | None:
    """The opening diagram's outputs as a Chinese notebook stores them (None if it has none)."""
    if not target.exists():
        return None
    nb = nbformat.read(target, as_version=4)
    index = diagram_cell(nb)
    if index is None:
        return None
    outputs = nb.cells[index].outputs
    if not outputs or any(DRAWN not in o.get("metadata", {}) for o in outputs):
        return None
    return outputs


def notebooks(check: bool) -> int:
    """Write (or with ``check``, compare) zh/book/*.ipynb, the runnable Chinese notebooks that
    the Chinese edition's download and Colab buttons open. Writing draws every opening diagram
    in Chinese; the check takes the stored ones (the tests redraw and compare them)."""
    pages = sorted((ROOT / "book").glob("[0-9]*.ipynb"))
    drawn = {} if check else draw_diagrams(LANGUAGE, pages)
    stale = []
    for page in pages:
        target = ZH_NOTEBOOKS / page.name
        pictures = stored_diagrams(target) if check else drawn.get(page.name)
        nb, done, missed = chinese_notebook(page, pictures)
        if check and pictures is None and diagram_cell(nb) is not None:
            stale.append(target.relative_to(ROOT))
            continue
        text = nbformat.writes(nb) + "\n"
        if check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(target.relative_to(ROOT))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"{target.relative_to(ROOT)}: {done} blocks in Chinese, {len(missed)} in English")
    if stale:
        print(f"out of date: {', '.join(map(str, stale))}; run `python tools/i18n.py notebooks`")
        return 1
    return 0


def zh_config() -> Path:
    """The English _config.yml with the Chinese edition's settings: one config, two builds. It is
    read and written as YAML data (no text replacement), so its layout does not matter."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config.setdefault("sphinx", {})
    sphinx.setdefault("config", {}).update(
        {
            "language": LANGUAGE,
            # MyST-NB's buttons on folded code cells (their English is not a gettext message)
            "nb_code_prompt_show": "显示代码单元格",
            "nb_code_prompt_hide": "隐藏代码单元格",
        }
    )
    # local extensions are found relative to the config file, which lies in _build/ here; the
    # Chinese edition adds one: each chapter's opening diagram as zh/book/*.ipynb stores it
    extensions = {**sphinx.get("local_extensions", {}), "chinese_diagrams": "_ext"}
    sphinx["local_extensions"] = {name: str(ROOT / folder) for name, folder in extensions.items()}
    # the book's title (the navigation's header, the browser tab) from the preface's catalog
    root = LOCALE / "book" / "intro.po"
    if root.exists():
        titles = {e.msgid: e.msgstr for e in polib.pofile(str(root)) if e.msgstr}
        config["title"] = titles.get(config.get("title"), config.get("title"))
    # the Colab and download buttons open the Chinese notebooks, zh/book/*.ipynb
    config.setdefault("repository", {})["path_to_book"] = "zh"
    ZH_CONFIG.parent.mkdir(parents=True, exist_ok=True)
    ZH_CONFIG.write_text(
        yaml.safe_dump(config, allow_unicode=True, sort_keys=False, width=100), encoding="utf-8"
    )
    return ZH_CONFIG


def build() -> None:
    """The Chinese edition, built like the English one, into _build/html/zh/."""
    out = ROOT / "_build" / LANGUAGE
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(
        [jupyter_book(), "build", str(ROOT), "--config", str(zh_config()), "--path-output",
         str(out), "-W", "-n", "--keep-going"],
        check=True, cwd=ROOT,
    )  # fmt: skip
    shutil.rmtree(ZH_SITE, ignore_errors=True)
    shutil.copytree(out / "_build" / "html", ZH_SITE)
    print(f"The Chinese edition is in {ZH_SITE.relative_to(ROOT)}/index.html")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("pot", help="write the English messages (.pot)")
    sub.add_parser("update", help="merge the messages into the catalogs (.po)")
    s = sub.add_parser("stats", help="translated, untranslated and fuzzy messages per page")
    s.add_argument("--check", action="store_true", help="fail unless every message is translated")
    sub.add_parser("build", help="build the Chinese edition into _build/html/zh/")
    s = sub.add_parser("todo", help="a page's messages still to translate, as JSON")
    s.add_argument("page", help="e.g. book/06_attention_scoring")
    s.add_argument("out", type=Path)
    s = sub.add_parser("notebooks", help="write the Chinese notebooks zh/book/*.ipynb")
    s.add_argument("--check", action="store_true", help="fail if one is out of date")
    s = sub.add_parser("apply", help="put a translated todo file into its catalog")
    s.add_argument("file", type=Path)
    sub.add_parser("diagrams", help="merge the diagrams' labels into their catalog (.po)")
    s = sub.add_parser("_draw", help=argparse.SUPPRESS)
    s.add_argument("language")
    s.add_argument("out", type=Path)
    s.add_argument("pages", type=Path, nargs="*")
    args = parser.parse_args()
    if args.command == "pot":
        for path in pot():
            print(path.relative_to(ROOT))
    elif args.command == "update":
        update()
    elif args.command == "stats":
        return stats(args.check)
    elif args.command == "build":
        build()
    elif args.command == "todo":
        todo(args.page, args.out)
    elif args.command == "apply":
        apply(args.file)
        return notebooks(check=False)
    elif args.command == "notebooks":
        return notebooks(args.check)
    elif args.command == "diagrams":
        update_diagrams()
    elif args.command == "_draw":
        _draw(args.language, args.out, args.pages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
