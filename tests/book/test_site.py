"""The built book, opened in a real browser (headless Chromium) with no network.

Every page of the table of contents must load, show its title, load all its figures and typeset its
math (no raw `$...$` or `\\(...\\)` left in the text, no MathJax errors), and the browser must not
try to fetch anything from the internet. Every page must also read well: at 1280 px no code cell,
output or display equation needs sideways scrolling, at 390 px the page itself never scrolls
sideways, every figure is sharp and shown large enough for its labels to be read, and Chinese
draws as Chinese even on a machine with no CJK font (this one has none: the book serves its own).
A screenshot of every page at both widths is saved under `_build/screenshots/` for a person to
look at. Run `make book` first (`make site-test` does both).
"""

from __future__ import annotations

import os
import re
import shutil
from io import BytesIO
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from toc import toc_files

ROOT = Path(__file__).resolve().parents[2]
# A book built elsewhere (`jupyter-book build . --path-output DIR`) is tested with BOOK_BUILD=DIR/_build.
BUILD = Path(os.environ.get("BOOK_BUILD", ROOT / "_build"))
HTML = BUILD / "html"
SCREENSHOTS = BUILD / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = pytest.mark.browser


def toc_pages() -> list[str]:
    """Every page of _toc.yml: the root, the chapters and their sections (e.g. solutions)."""
    files = toc_files()
    return [re.sub(r"\.(ipynb|md)$", "", f) for f in files]


def source_title(page: str) -> str:
    for ext in (".md", ".ipynb"):
        path = ROOT / (page + ext)
        if path.exists():
            import jupytext

            nb = jupytext.read(path)
            for cell in nb.cells:
                if cell.cell_type == "markdown":
                    for line in cell.source.splitlines():
                        if line.startswith("# "):
                            return line[2:].strip()
    raise AssertionError(f"no '# ' title found in {page}")


@pytest.fixture(scope="module")
def browser():
    if not (HTML / "index.html").exists():
        pytest.fail("the book is not built: run `make book` (or `make site-test`) first")
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: `apt-get install chromium` (make site-test does it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


CHECK_JS = """
() => {
  const imgs = [...document.querySelectorAll('article img')];
  const broken = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);
  const article = document.querySelector('article') || document.body;
  const clone = article.cloneNode(true);
  clone.querySelectorAll('pre, code, mjx-container, script, style, .cell_input').forEach(e => e.remove());
  // links stay: their rendered text is part of the sentence a reader reads
  clone.querySelectorAll('.headerlink').forEach(e => e.remove());
  const prose = [...clone.querySelectorAll('p, li, h1, h2, h3, td, th, dt, dd, figcaption')]
    .filter(e => !e.closest('blockquote, .cell_output, .language-switch, .citation-list, .citation, dl.py'))
    .map(e => e.innerText.replace(/[“"][^”"]*[”"]/g, ' ').trim())
    .filter(s => s.length > 0);
  return {
    prose: prose,
    h1: (document.querySelector('article h1') || {innerText: ''}).innerText,
    images: imgs.length,
    broken: broken,
    math: document.querySelectorAll('mjx-container').length,
    mathErrors: document.querySelectorAll('mjx-merror').length,
    text: clone.innerText,
  };
}
"""


class open_page:
    """Open a built page in a new browser context with no network; wait for math and fonts."""

    def __init__(self, browser, page: str, width: int, external: list[str] | None = None):
        self.browser, self.page, self.width = browser, page, width
        self.external = external if external is not None else []

    def __enter__(self):
        self.ctx = self.browser.new_context(viewport={"width": self.width, "height": 900})

        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:  # no network: anything else is a page that would break offline
                self.external.append(r.request.url)
                r.abort()

        self.ctx.route("**/*", route)
        tab = self.ctx.new_page()
        tab.goto((HTML / (self.page + ".html")).as_uri(), wait_until="load")
        # Wait (up to 10 s) for MathJax, loaded with defer, to finish typesetting, then for the
        # web fonts that the page's characters asked for.
        tab.evaluate(
            """async () => {
          for (let i = 0; i < 100 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
            await new Promise(r => setTimeout(r, 100));
          if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
          await document.fonts.ready;
        }"""
        )
        return tab

    def __exit__(self, *exc):
        self.ctx.close()


@pytest.mark.parametrize("page", toc_pages())
def test_page_renders_offline(browser, page: str):
    html = HTML / (page + ".html")
    assert html.exists(), f"{html} was not built"
    external: list[str] = []
    with open_page(browser, page, width=1280, external=external) as tab:
        info = tab.evaluate(CHECK_JS)

    title = source_title(page)
    assert info["h1"].replace("#", "").strip().startswith(title[:40]), (info["h1"], title)
    assert not info["broken"], f"images that did not load: {info['broken']}"
    assert info["mathErrors"] == 0
    raw = re.findall(r"\$\$|\\\(|\\\[|(?<![\w$])\$[^$\s][^$\n]{0,80}\$", info["text"])
    assert not raw, f"math left untypeset on {page}: {raw[:5]}"
    src = (ROOT / (page + ".md")).read_text() if (ROOT / (page + ".md")).exists() else ""
    if "$" in src:
        assert info["math"] > 0, f"{page} has math but nothing was typeset"
    assert not external, f"{page} tried to fetch from the network: {external}"


LAYOUT_JS = """
() => {
  const overflows = e => e.scrollWidth > e.clientWidth + 1;
  const describe = (e, kind, i) => kind + " " + (i + 1) + ": " +
      (e.innerText || "").split("\\n").find(l => l.trim()) ;
  const found = [];
  const groups = {
    "code cell": "article .cell_input pre",
    "output": "article .cell_output pre",
    "display equation": 'article mjx-container[display="true"]',
  };
  for (const [kind, selector] of Object.entries(groups))
    [...document.querySelectorAll(selector)].forEach((e, i) => {
      if (overflows(e)) found.push(describe(e, kind, i).slice(0, 120));
    });
  return {
    overflowing: found,
    pageScrollsSideways: document.documentElement.scrollWidth > window.innerWidth + 1,
    pageWidth: document.documentElement.scrollWidth,
  };
}
"""


@pytest.mark.parametrize("page", toc_pages())
def test_code_outputs_and_equations_fit_the_page(browser, page: str):
    """At 1280 px nothing needs sideways scrolling; at 390 px the page itself does not scroll
    sideways (a code cell may scroll inside its own box there). Saves both screenshots."""
    for width in (1280, 390):
        with open_page(browser, page, width) as tab:
            info = tab.evaluate(LAYOUT_JS)
            shot = SCREENSHOTS / str(width) / (page.replace("/", "_") + ".png")
            shot.parent.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(shot), full_page=True)
        assert not info["pageScrollsSideways"], (
            f"{page} at {width} px is {info['pageWidth']} px wide: the page scrolls sideways "
            f"(screenshot: {shot})"
        )
        if width == 1280:
            assert not info["overflowing"], (
                f"{page} at 1280 px: these need sideways scrolling (keep code lines to 100 "
                f"characters and wrap long prints): {info['overflowing']}"
            )


FIGURES_JS = """
() => [...document.querySelectorAll('article img')].map(i => ({
  src: i.src, shown: i.getBoundingClientRect().width, natural: i.naturalWidth,
}))
"""
SMALLEST_LABEL_PT = 9  # the plotting style's smallest font (tick labels, diagram notes)
MIN_LABEL_PX = 11  # a label smaller than this on the screen is hard to read


def _png_dpi(path: Path) -> float:
    from PIL import Image

    with Image.open(BytesIO(path.read_bytes())) as img:
        dpi = img.info.get("dpi", (72, 72))[0]
    return float(dpi)


@pytest.mark.parametrize("page", toc_pages())
def test_figures_are_sharp_and_readable_at_the_size_shown(browser, page: str):
    """A figure's smallest label (9 pt in the book's style) must be at least 11 px high as shown
    at 1280 px, and the image must have at least 1.5 pixels per displayed pixel (sharp on high-DPI
    screens). A PNG's own dpi says how many pixels an inch of the figure has."""
    with open_page(browser, page, 1280) as tab:
        figures = tab.evaluate(FIGURES_JS)
    problems = []
    for n, fig in enumerate(figures, 1):
        path = Path(unquote(urlparse(fig["src"]).path))
        if path.suffix.lower() != ".png" or fig["shown"] == 0:
            continue
        shown_per_inch = _png_dpi(path) * fig["shown"] / fig["natural"]
        label_px = SMALLEST_LABEL_PT / 72 * shown_per_inch
        sharpness = fig["natural"] / fig["shown"]
        if label_px < MIN_LABEL_PX or sharpness < 1.5:
            problems.append(
                f"figure {n} ({path.name}): shown {fig['shown']:.0f} px wide from "
                f"{fig['natural']} px, a 9 pt label is {label_px:.1f} px, "
                f"{sharpness:.2f} image px per screen px"
            )
    assert not problems, (
        f"{page}: figures too small or blurry; draw them with "
        f"transformer_tutorial.plotting.use_book_style(): {problems}"
    )


CJK_JS = """
async () => {
  const walker = document.createTreeWalker(document.querySelector('article'), NodeFilter.SHOW_TEXT);
  let node, found = null;
  while ((node = walker.nextNode()))
    if (/[\\u4e00-\\u9fff]{2}/.test(node.textContent)) { found = node; break; }
  if (!found) return null;
  const chars = [...new Set(found.textContent.match(/[\\u4e00-\\u9fff]/g))].slice(0, 2);
  const font = getComputedStyle(found.parentElement).font;
  const draw = ch => {
    const c = document.createElement('canvas'); c.width = 64; c.height = 64;
    const g = c.getContext('2d'); g.font = font.replace(/\\d+(\\.\\d+)?px/, '40px');
    g.fillStyle = '#000'; g.textBaseline = 'top'; g.fillText(ch, 4, 4);
    return Array.from(g.getImageData(0, 0, 64, 64).data).join(',');
  };
  return {
    chars: chars,
    distinct: draw(chars[0]) !== draw(chars[1]),
    notTofu: draw(chars[0]) !== draw('\\uE000') && draw(chars[1]) !== draw('\\uE000'),
    webFont: document.fonts.check('16px "Noto Sans SC"', chars.join('')),
  };
}
"""
CJK_PAGES = [
    p
    for p in toc_pages()
    if re.search("[\u4e00-\u9fff]", (ROOT / p).with_suffix(".md").read_text())
]


@pytest.mark.parametrize("page", CJK_PAGES)
def test_chinese_draws_as_glyphs_not_boxes(browser, page: str):
    """Missing glyphs draw as identical boxes; real glyphs of two characters differ from each
    other and from the box of a private-use character that no font has."""
    with open_page(browser, page, 1280) as tab:
        info = tab.evaluate(CJK_JS)
    assert info is not None, f"{page}: no Chinese text found in the article"
    assert info["webFont"], f"{page}: the book's Noto Sans SC did not load for {info['chars']}"
    assert info["distinct"] and info["notTofu"], f"{page}: {info['chars']} draw as boxes"


# --- the fonts Chromium actually drew, and the Chinese edition (_build/html/zh/) -------------

FIRST_CJK_JS = """
(selector) => {
  const root = document.querySelector(selector);
  if (!root) return null;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode()))
    if (/[\\u4e00-\\u9fff]/.test(node.textContent) && node.parentElement.checkVisibility(
          {opacityProperty: true, visibilityProperty: true})) {
      node.parentElement.setAttribute('data-cjk-probe', selector);
      return node.textContent.trim().slice(0, 30);
    }
  return null;
}
"""


def drawn_fonts(tab, selector: str) -> tuple[str | None, set[str]]:
    """The text of the first visible Chinese text under ``selector`` and the fonts Chromium
    used to draw it (DevTools' CSS.getPlatformFontsForNode: what was drawn, not what the style
    sheet asked for)."""
    text = tab.evaluate(FIRST_CJK_JS, selector)
    if text is None:
        return None, set()
    cdp = tab.context.new_cdp_session(tab)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    found = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "[data-cjk-probe]"})
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": found["nodeId"]})["fonts"]
    cdp.detach()
    return text, {f["familyName"] for f in fonts}


NAV = ".bd-sidebar-primary"


@pytest.mark.parametrize("edition", ["", "zh/"], ids=["en", "zh"])
def test_the_navigation_draws_chinese_with_the_web_font(browser, edition: str):
    """The sidebar is laid out first; its Chinese must still be drawn by Noto Sans SC, not as
    boxes by a Latin font (a stylesheet imported from custom.css arrived too late for it)."""
    page = edition + toc_pages()[1]
    with open_page(browser, page, 1280) as tab:
        text, fonts = drawn_fonts(tab, NAV)
    assert text, f"{page}: no Chinese in the navigation"
    assert any(f.startswith("Noto Sans SC") for f in fonts), (
        f"{page}: the navigation's {text!r} was drawn by {fonts}"
    )


SWITCH_JS = """
() => {
  const a = document.querySelector('p.language-switch a');
  return {
    lang: document.documentElement.lang,
    href: a ? a.href : null,
    h1: (document.querySelector('article h1') || {innerText: ''}).innerText,
  };
}
"""


@pytest.mark.parametrize("page", toc_pages())
def test_chinese_page_loads_offline_in_chinese_and_links_its_english_twin(browser, page: str):
    zh = HTML / "zh" / (page + ".html")
    assert zh.exists(), f"{zh} was not built: `make book` builds both editions"
    external: list[str] = []
    with open_page(browser, "zh/" + page, 1280, external=external) as tab:
        info = tab.evaluate(CHECK_JS)
        switch = tab.evaluate(SWITCH_JS)
        links = tab.evaluate(LINKS_JS)
        text, fonts = drawn_fonts(tab, "article")
    assert not external, f"zh/{page} tried to fetch from the network: {external}"
    assert not info["broken"] and info["mathErrors"] == 0
    assert switch["lang"] == "zh-CN", switch
    english = Path(unquote(urlparse(switch["href"]).path))
    assert english.resolve() == (HTML / (page + ".html")).resolve(), switch["href"]
    with open_page(browser, page, 1280) as tab:
        back = tab.evaluate(SWITCH_JS)
    assert Path(unquote(urlparse(back["href"]).path)).resolve() == zh.resolve(), back["href"]
    if text:  # a translated page: its Chinese is drawn by the book's web font
        assert any(f.startswith("Noto Sans SC") for f in fonts), f"zh/{page}: {text!r}: {fonts}"
    if translated(page) and page != "book/api":  # the API page is the code's docstrings
        english_only = [p for p in info["prose"] if ENGLISH_PROSE.search(p)]
        assert not english_only, f"zh/{page}: prose with no Chinese in it: {english_only[:3]}"
    inside = titles_inside_sentences(links, chinese_titles())
    assert not inside, f"zh/{page}: a page's title read inside a sentence: {inside[:3]}"


# A chapter named in a Chinese sentence reads as Chinese: "在第 7 章中", not the page's numbered
# title "在第 7. Bahdanau 注意力：每一步都有新的上下文 章中" (what a bare {doc} link renders). The
# rendered text is read with its links: each internal link with the text of its paragraph, list
# item or table cell. A link that is the whole of its cell or item (a column of chapters, a
# list of contents) may show a title.
LINKS_JS = """
() => [...document.querySelectorAll('article a.reference.internal')]
  .filter(a => !a.closest('.headerlink, .cell_output, nav, .toctree-wrapper, .language-switch'))
  .map(a => {
    const block = a.closest('p, li, td, th, dt, dd, figcaption, h1, h2, h3, h4');
    return {link: a.innerText.trim(), block: block ? block.innerText.trim() : a.innerText.trim()};
  })
"""
LIST_NUMBER = re.compile(r"^\d+\.\s")  # "13. Transformer 的 …": a title's number
NUMBER_MID_SENTENCE = re.compile(r"[\u4e00-\u9fff，、（：；]\s*\d{1,2}\.\s+[A-Za-z\u4e00-\u9fff]")


def chinese_titles() -> set[str]:
    """Every page's Chinese title, as the pages' catalogs give it (number unescaped)."""
    import polib

    titles = set()
    for po in (ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "book").glob("*.po"):
        entries = [e for e in polib.pofile(str(po)) if e.msgstr and not e.obsolete]
        if entries:
            titles.add(entries[0].msgstr.replace("\\.", ".").strip())
    return titles


def titles_inside_sentences(links: list[dict], titles: set[str]) -> list[str]:
    """The links (and blocks) where a page's title, or an "N. Title" list number, is read in
    the middle of a sentence."""
    found = []
    for item in links:
        link, block = item["link"], item["block"]
        rest = block
        for other in links:  # the other links of the same cell: a list of chapters
            if other["block"] == block:
                rest = rest.replace(other["link"], "", 1)
        if re.sub(r"[\s\W_]+", "", rest) and (LIST_NUMBER.match(link) or link in titles):
            found.append(f"{link!r} in {block[:80]!r}")
    blocks = {item["block"] for item in links}
    found += [
        f"{m.group(0)!r} in {b[:80]!r}" for b in blocks if (m := NUMBER_MID_SENTENCE.search(b))
    ]
    return found


def test_the_title_rule_finds_a_title_inside_a_sentence():
    titles = {"7. Bahdanau 注意力：每一步都有新的上下文"}
    bad = {"link": "7. Bahdanau 注意力：每一步都有新的上下文",
           "block": "在第 7. Bahdanau 注意力：每一步都有新的上下文 章中，解码器回看编码器的状态。"}  # fmt: skip
    mid = {
        "link": "13. Transformer",
        "block": "本章用包中 13. Transformer 的 EncoderLayer 构建 BERT。",
    }
    good = {"link": "第 7 章", "block": "在第 7 章中，解码器回看编码器的状态。"}
    cell = {"link": "7. Bahdanau 注意力：每一步都有新的上下文",
            "block": "7. Bahdanau 注意力：每一步都有新的上下文"}  # fmt: skip
    assert len(titles_inside_sentences([bad], titles)) == 2
    assert titles_inside_sentences([mid], set())
    two = [
        {"link": "4. 编码器-解码器及其瓶颈", "block": "4. 编码器-解码器及其瓶颈, 13. Transformer"},
        {"link": "13. Transformer", "block": "4. 编码器-解码器及其瓶颈, 13. Transformer"},
    ]
    assert not titles_inside_sentences([good, cell, *two], titles)


def test_the_chinese_edition_shows_the_chinese_diagrams():
    """Each chapter's opening diagram on the Chinese page is the picture the Chinese notebook
    stores, drawn in Chinese (tools/i18n.py notebooks, _ext/chinese_diagrams.py), not the
    English page's picture."""
    import base64
    import sys

    import nbformat

    sys.path.insert(0, str(ROOT / "tools"))
    import i18n

    checked = 0
    for page in toc_pages():
        notebook = ROOT / "zh" / (page + ".ipynb")
        stored = i18n.stored_diagrams(notebook) if notebook.exists() else None
        if not stored:
            continue
        html = (HTML / "zh" / (page + ".html")).read_text(encoding="utf-8")
        english = (HTML / (page + ".html")).read_text(encoding="utf-8")
        shown = re.findall(r'<img[^>]+src="([^"]*_images/[^"]+\.png)"', html)  # outputs
        wanted = [base64.b64decode(nbformat.from_dict(o).data["image/png"]) for o in stored]
        pictures = [(HTML / "zh" / page).parent.joinpath(src).read_bytes() for src in shown]
        for picture in wanted:
            assert picture in pictures, f"zh/{page}: the Chinese diagram is not on the page"
        first = shown[0].rsplit("/", 1)[-1]
        assert first not in english, f"zh/{page} shows the English page's first figure"
        checked += 1
    assert checked == 20, checked


# A prose paragraph of the Chinese edition must hold Chinese. Excepted by rule, not by list:
# code, math, code cells and outputs, figures, quotations of English sources (blockquotes and
# text in quotation marks), bibliographic entries (bibliography, or a list entry that starts with
# its authors' initials), the API reference's docstrings (the code's own documentation), and
# paragraphs with no run of four English words (names, numbers).
ENGLISH_PROSE = re.compile(
    r"^(?![A-Z]\. [A-Z])"  # a reference list's entry ("P. Shaw, J. Uszkoreit, ...")
    r"(?!.*[\u4e00-\u9fff]).*\b[A-Za-z]{2,}(?:[ ,;:]+[A-Za-z'-]{2,}){3}"
)


def translated(page: str) -> bool:
    """A page of the Chinese edition whose catalog has a translation."""
    import polib

    po = ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / (page + ".po")
    return po.exists() and any(e.msgstr and e.msgstr != e.msgid for e in polib.pofile(str(po)))


def test_the_web_font_covers_every_chinese_character_of_both_editions():
    """Each CJK character of the Chinese catalogs and of the English pages (the notes' quotes,
    the terms' Chinese names) lies in the unicode-range of one of the web font's faces."""
    import polib

    css = ROOT / "_vendor" / "fonts" / "noto-sans-sc.css"
    assert css.exists(), "the book is not built: run `make book` first"
    ranges = []
    for found in re.findall(r"unicode-range:\s*([^;]+);", css.read_text(encoding="utf-8")):
        for part in found.split(","):
            lo, _, hi = part.strip().upper().removeprefix("U+").partition("-")
            ranges.append((int(lo, 16), int(hi or lo, 16)))
    text = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "book").glob("*.md"))
    for po in (ROOT / "locale").rglob("*.po"):
        text += "".join(e.msgstr for e in polib.pofile(str(po)))
    chars = set(re.findall("[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]", text))
    missing = sorted(c for c in chars if not any(a <= ord(c) <= b for a, b in ranges))
    assert len(chars) > 1000, len(chars)
    assert not missing, f"{len(missing)} characters the web font does not cover: {missing[:40]}"
