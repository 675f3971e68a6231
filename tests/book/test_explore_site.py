"""The attention views in the built book, in a real browser (headless Chromium) with no network.

Each chapter page with a view is opened as a file (``file://``), in both editions: every view's
script runs without an error and without fetching anything, pointing at a token or moving to it
with the keyboard lights that token's row (and only its links), the selectors switch the kind of
attention, the heatmap is there with JavaScript off, and at phone width the view scrolls inside
its own box rather than making the page scroll sideways. Tokens that look like markup stay text.
Run `make book` first (`make site-test` does both).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_site import CHROMIUM, HTML, drawn_fonts

from transformer_tutorial.explore import attention_view, colour

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, as in test_site.py."""
    if not (HTML / "index.html").exists():
        pytest.fail("the book is not built: run `make book` (or `make site-test`) first")
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: `apt-get install chromium` (make site-test does it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"],
        )  # fmt: skip
        yield b
        b.close()


# The chapters that show views, and how many each shows.
VIEWS = {
    "book/08_self_attention": 1,
    "book/09_multihead": 1,
    "book/10_positional_encoding": 1,
    "book/12_masks": 1,
    "book/13_transformer": 2,
    "book/15_decoding": 1,
    "book/20_long_sequences": 1,
}
EDITIONS = ["", "zh/"]
MASKS = "book/12_masks"  # "Hello World" -> "你好世界": equal scores, exact weights 1/k

STATE_JS = """
() => [...document.querySelectorAll('.tta')].map(v => {
  const panel = [...v.querySelectorAll('.tta-panel')].find(p => p.style.display !== 'none');
  const lit = panel.querySelector('tr.tta-on');
  return {
    ready: v.dataset.ready === '1',
    controlsShown: !!v.querySelector('.tta-controls') && !v.querySelector('.tta-controls').hidden,
    panel: panel.dataset.p,
    lit: lit ? lit.dataset.i : null,
    litCells: lit ? [...lit.querySelectorAll('td')].map(td => getComputedStyle(td).backgroundColor) : [],
    links: panel.querySelectorAll('svg line').length,
    readout: v.querySelector('.tta-readout').textContent,
    focused: document.activeElement && document.activeElement.dataset.i,
  };
})
"""


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


class watched:
    """A built page opened as a file with no network (as ``open_page`` does), recording console
    errors, uncaught exceptions and requests that left the machine."""

    def __init__(self, browser, page: str, width: int = 1280):
        self.browser, self.page, self.width = browser, page, width
        self.errors: list[str] = []
        self.external: list[str] = []

    def __enter__(self):
        self.ctx = self.browser.new_context(viewport={"width": self.width, "height": 900})

        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                self.external.append(r.request.url)
                r.abort()

        self.ctx.route("**/*", route)
        self.tab = self.ctx.new_page()
        self.tab.on("pageerror", lambda e: self.errors.append(str(e)))
        self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.tab.goto((HTML / (self.page + ".html")).as_uri(), wait_until="load")
        return self

    def __exit__(self, *exc):
        self.ctx.close()


# A page with no view: what the book's theme itself writes to the console, on every page
# (Jupyter Book 1's "THEBE_JS_URL has already been declared" and "invalid theme mode"). A view
# must add nothing to it.
NO_VIEW = "book/11_ffn_addnorm"
_theme_errors: dict[str, list[str]] = {}


def new_errors(browser, edition: str, errors: list[str]) -> list[str]:
    if edition not in _theme_errors:
        with watched(browser, edition + NO_VIEW) as w:
            assert not w.tab.locator(".tta").count(), f"{NO_VIEW} has a view: pick another page"
        _theme_errors[edition] = w.errors
    return [e for e in errors if e not in _theme_errors[edition]]


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
@pytest.mark.parametrize("page", sorted(VIEWS))
def test_every_view_starts_offline_from_a_file_without_errors(browser, page: str, edition: str):
    path = HTML / (edition + page + ".html")
    assert path.exists(), f"{path} was not built: run `make book`"
    with watched(browser, edition + page) as w:
        assert w.tab.url.startswith("file://")
        views = w.tab.evaluate(STATE_JS)
        w.tab.locator('.tta th.tta-q[data-i="1"]').first.hover()
        after = w.tab.evaluate(STATE_JS)[0]
    assert len(views) == VIEWS[page], f"{page}: {len(views)} views, expected {VIEWS[page]}"
    assert all(v["ready"] for v in views), f"{edition}{page}: a view's script did not run"
    errors = new_errors(browser, edition, w.errors)
    assert not errors, f"{edition}{page}: console errors from the view: {errors}"
    assert not w.external, f"{edition}{page} fetched {w.external}"
    assert after["lit"] == "1" and after["readout"].startswith("\u201c")


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_pointing_at_a_token_lights_its_row_and_its_links(browser, edition: str):
    """Decoder self-attention of "<bos> 你 好 世 界 <pad>" under the causal and padding masks:
    世 (query 3) sees 4 keys, 1/4 each."""
    with watched(browser, edition + MASKS) as w:
        tab = w.tab
        kind = tab.locator('.tta select[data-k="p"]')
        kind.select_option(value="1")  # the second kind: decoder self-attention
        named = kind.evaluate("e => e.options[e.selectedIndex].textContent")
        tab.locator('.tta-panel[data-p="1"] th.tta-q[data-i="3"]').hover()
        state = tab.evaluate(STATE_JS)[0]
    assert state["controlsShown"] and state["panel"] == "1" and state["lit"] == "3"
    assert named == ("解码器自注意力" if edition else "decoder self-attention")
    quarter, zero = rgb(colour(64)), rgb(colour(0))
    assert state["litCells"] == [quarter] * 4 + [zero] * 2
    assert state["links"] == 4  # one link per visible key, none to the future or to <pad>
    # the Chinese edition's page says it in Chinese (the same output, read by the page's language)
    said = "\u201c世\u201d（第 4 个查询）关注" if edition else "\u201c世\u201d (query 4) attends to"
    assert said in state["readout"] and "0.25" in state["readout"], state["readout"]
    assert not new_errors(browser, edition, w.errors)


def test_the_keyboard_lights_the_row_of_the_focused_token(browser):
    """Tab from the last key header moves the focus to the first query; its row lights."""
    with watched(browser, MASKS) as w:
        tab = w.tab
        last_key = tab.locator('.tta-panel[data-p="0"] th.tta-k').last
        last_key.focus()
        tab.keyboard.press("Tab")
        state = tab.evaluate(STATE_JS)[0]
        tab.keyboard.press("Tab")
        second = tab.evaluate(STATE_JS)[0]
    assert state["focused"] == "0" and state["lit"] == "0", state
    assert second["focused"] == "1" and second["lit"] == "1", second
    assert "\u201cHello\u201d (query 1)" in state["readout"]


def test_the_heatmap_shows_with_javascript_off(browser):
    ctx = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    tab = ctx.new_page()
    tab.goto((HTML / (MASKS + ".html")).as_uri())
    cells = tab.locator('.tta-panel[data-p="1"] tr[data-i="3"] td')
    colours = [cells.nth(i).evaluate("e => getComputedStyle(e).backgroundColor") for i in range(6)]
    controls_visible = tab.locator(".tta-controls").is_visible()
    panels_visible = tab.locator(".tta-panel").count()
    ctx.close()
    assert colours == [rgb(colour(64))] * 4 + [rgb(colour(0))] * 2
    assert not controls_visible  # selectors that need the script are hidden without it
    assert panels_visible == 3  # all three kinds of attention are shown instead


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
@pytest.mark.parametrize("page", sorted(VIEWS))
def test_at_phone_width_the_view_scrolls_in_its_own_box(browser, page: str, edition: str):
    with watched(browser, edition + page, width=390) as w:
        info = w.tab.evaluate(
            """() => ({
          page: document.documentElement.scrollWidth,
          views: [...document.querySelectorAll('.tta')].map(v => {
            const r = v.getBoundingClientRect(), box = v.querySelector('.tta-box');
            return {right: r.right, scrolls: getComputedStyle(box).overflowX};
          }),
        })"""
        )
    assert info["page"] <= 391, f"{edition}{page} at 390 px is {info['page']} px wide"
    for v in info["views"]:
        assert v["right"] <= 391 and v["scrolls"] == "auto", v


def test_tokens_that_look_like_markup_stay_text(browser, tmp_path: Path):
    import torch

    evil = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>", "a&b"]
    page = tmp_path / "view.html"
    attention_view(torch.full((3, 3), 1 / 3), evil, title=evil[0]).save_html(page)
    ctx = browser.new_context()
    tab = ctx.new_page()
    dialogs: list[str] = []
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    tab.goto(page.as_uri())
    tab.locator('th.tta-q[data-i="0"]').hover()
    found = tab.evaluate(
        """() => ({
      images: document.querySelectorAll('.tta img').length,
      scripts: document.querySelectorAll('script').length,
      headers: [...document.querySelectorAll('th.tta-q')].map(e => e.textContent),
      readout: document.querySelector('.tta-readout').textContent,
      svgText: [...document.querySelectorAll('.tta-links text')].map(e => e.textContent),
    })"""
    )
    ctx.close()
    assert not dialogs and found["images"] == 0 and found["scripts"] == 1
    assert found["headers"] == evil
    assert found["readout"].startswith("\u201c<img src=x onerror=alert(1)>\u201d (query 1)")
    assert "<img src=x one" in found["svgText"]


@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh"])
def test_chinese_tokens_draw_with_the_books_web_font(browser, edition: str):
    """The view keeps the page's font family: its Chinese tokens (你好世界) are drawn by the
    book's Noto Sans SC, not as boxes, on a machine with no CJK font (this one)."""
    with watched(browser, edition + MASKS) as w:
        w.tab.locator('.tta select[data-k="p"]').select_option(value="1")  # the decoder's tokens
        w.tab.evaluate("async () => { await document.fonts.ready; }")
        text, fonts = drawn_fonts(w.tab, '.tta-panel[data-p="1"] tr[data-i="1"]')
    assert text, "no Chinese token in the view"
    assert any(f.startswith("Noto Sans SC") for f in fonts), f"{text!r} drawn by {fonts}"
