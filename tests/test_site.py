"""The built book, opened in a real browser (headless Chromium) with no network.

Every page of the table of contents must load, show its title, load all its figures and typeset its
math (no raw `$...$` or `\\(...\\)` left in the text, no MathJax errors), and the browser must not
try to fetch anything from the internet. Run `make book` first (`make site-test` does both).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = pytest.mark.browser


def toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
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
  return {
    h1: (document.querySelector('article h1') || {innerText: ''}).innerText,
    images: imgs.length,
    broken: broken,
    math: document.querySelectorAll('mjx-container').length,
    mathErrors: document.querySelectorAll('mjx-merror').length,
    text: clone.innerText,
  };
}
"""


@pytest.mark.parametrize("page", toc_pages())
def test_page_renders_offline(browser, page: str):
    html = HTML / (page + ".html")
    assert html.exists(), f"{html} was not built"
    ctx = browser.new_context()
    external: list[str] = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:  # no network: anything else is a page that would break offline
            external.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    tab = ctx.new_page()
    tab.goto(html.as_uri(), wait_until="load")
    # Wait (up to 10 s) for MathJax, loaded with defer, to finish typesetting.
    tab.evaluate(
        """async () => {
      for (let i = 0; i < 100 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
        await new Promise(r => setTimeout(r, 100));
      if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
    }"""
    )
    info = tab.evaluate(CHECK_JS)
    ctx.close()

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
