"""The "Try the translator" page in a real browser (headless Chromium, opened as a file, with no
network): its translations against the Python translator's, its attention view, its answers to
bad input, in both editions. Run `make book` first (`make site-test` does both).

The page's models are what `make book` put into the site (tools/web_translator.py, its
manifest.json names the checkpoint of each pair). The reference is the Python translator on the
same weights: the page reads them in fp16, so the reference rounds them to fp16 too (the shipped
models are fp16 already, and there the reference is exactly `python -m
transformer_tutorial.translate --checkpoint <shipped model>`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BOOK_BUILD", ROOT / "_build"))
HTML = BUILD / "html"
PAGE = "book/try_translator"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SENTENCES = 200  # per pair: test2016 (Multi30k) and Tatoeba's test split

pytestmark = pytest.mark.browser


def manifest(html: Path = HTML) -> dict:
    path = html / "_static" / "translator" / "manifest.json"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make book` (it runs tools/web_translator.py)")
    return json.loads(path.read_text(encoding="utf-8"))


def need(pair: str) -> dict:
    info = manifest()["models"].get(pair)
    if info is None:
        pytest.skip(
            f"this build has no {pair} model: ship it (src/transformer_tutorial/pretrained/{pair}/) "
            f'or build with `make book WEB_TRANSLATOR="--{pair} <checkpoint>"`'
        )
    return info


def test_sentences(pair: str, n: int = SENTENCES) -> tuple[list[str], list[str]]:
    from transformer_tutorial.data import PAIRS

    pairs = PAIRS[pair].load("test")[:n]
    return [s for s, _ in pairs], [PAIRS[pair].reference(t) for _, t in pairs]


test_sentences.__test__ = False  # a helper, not a test


def python_greedy(
    checkpoint: str, sentences: list[str], beam_size: int = 1
) -> tuple[list[list[int]], list[str]]:
    """The Python translator's greedy ids and texts on the page's (fp16) weights."""
    import importlib.util

    tool = sys.modules.get("tools_web_translator")
    if tool is None:
        spec = importlib.util.spec_from_file_location(
            "tools_web_translator", ROOT / "tools" / "web_translator.py"
        )
        tool = importlib.util.module_from_spec(spec)
        sys.modules["tools_web_translator"] = tool
        spec.loader.exec_module(tool)
    return tool.reference_greedy(checkpoint, sentences, beam_size)


@pytest.fixture(scope="module")
def browser():
    if not (HTML / (PAGE + ".html")).exists():
        pytest.fail("the book is not built: run `make book` (or `make site-test`) first")
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: `apt-get install chromium` (make site-test does it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


THEME = "book/glossary"  # a page without the translator: its console errors are the theme's


class Tab:
    """One page opened from its file with the network blocked; records console errors,
    uncaught exceptions, dialogs (an alert would mean typed markup ran) and outside requests."""

    def __init__(self, browser, page: str = PAGE, width: int = 1280):
        self.ctx = browser.new_context(viewport={"width": width, "height": 900})
        self.errors, self.dialogs, self.external, self.requests = [], [], [], []

        def route(r):
            self.requests.append(r.request.url)
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                self.external.append(r.request.url)
                r.abort()

        self.ctx.route("**/*", route)
        self.tab = self.ctx.new_page()
        self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.tab.on("pageerror", lambda e: self.errors.append(str(e)))
        self.tab.add_init_script(LONG_TASKS)
        self.tab.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.tab.goto((HTML / (page + ".html")).as_uri(), wait_until="load")

    def own_errors(self) -> list[str]:
        """The console errors of this page that a page without the translator does not have
        (the book's theme logs two of its own on every page opened from a file)."""
        return [e for e in self.errors if e not in theme_errors(self.ctx.browser)]

    def translate(self, pair: str, texts: list[str], beam: int = 1) -> list[dict]:
        return self.tab.evaluate(
            "([p, t, b]) => translatorForTests.translate(p, t, b)", [pair, texts, beam]
        )

    def submit(self, text: str, pair: str = "de-en", beam: str = "1") -> None:
        """Type into the page and press Translate; wait until the page has answered."""
        t = self.tab
        t.select_option(".tt-pair", pair)
        t.select_option(".tt-search", beam)
        t.fill(".tt-input", text)
        t.click(".tt-go")
        t.wait_for_function(
            "() => !document.querySelector('.tt-go').disabled && "
            "document.querySelector('.tt-status').textContent", timeout=120_000
        )  # fmt: skip

    def text(self, selector: str) -> str:
        return self.tab.inner_text(selector)

    def close(self) -> None:
        self.ctx.close()


LONG_TASKS = """
window.__longTasks = [];
new PerformanceObserver(l => l.getEntries().forEach(e => window.__longTasks.push(e.duration)))
  .observe({type: "longtask", buffered: true});
"""
_THEME_ERRORS: dict[int, set[str]] = {}


def theme_errors(browser) -> set[str]:
    if id(browser) not in _THEME_ERRORS:
        t = Tab(browser, THEME)
        t.tab.wait_for_timeout(500)
        _THEME_ERRORS[id(browser)] = set(t.errors)
        t.close()
    return _THEME_ERRORS[id(browser)]


@pytest.fixture(scope="module")
def tab(browser):
    t = Tab(browser)
    yield t
    t.close()


@pytest.mark.parametrize("pair", ["de-en", "zh-en"])
def test_greedy_translations_equal_the_python_translator(tab, pair: str):
    """≥ 99 % of the sentences token for token, and BLEU within 0.2."""
    from transformer_tutorial.decoding import corpus_bleu

    info = need(pair)
    sources, references = test_sentences(pair)
    assert len(sources) >= SENTENCES
    ref_ids, ref_texts = python_greedy(info["checkpoint"], sources)
    page = tab.translate(pair, sources)
    same = sum(p["ids"] == r for p, r in zip(page, ref_ids, strict=True))
    differ = [
        (s, p["text"], t)
        for s, p, t, r in zip(sources, page, ref_texts, ref_ids, strict=True)
        if p["ids"] != r
    ]
    assert same >= 0.99 * len(sources), f"{same}/{len(sources)} equal; e.g. {differ[:3]}"
    page_bleu = corpus_bleu([p["text"] for p in page], references)[0].score
    python_bleu = corpus_bleu(ref_texts, references)[0].score
    assert abs(page_bleu - python_bleu) <= 0.2, (page_bleu, python_bleu)
    # equal ids give equal text: the page's detokenizer is the tokenizer's
    texts = [
        (p["text"], t) for p, t, r in zip(page, ref_texts, ref_ids, strict=True) if p["ids"] == r
    ]
    assert all(a == b for a, b in texts), [ab for ab in texts if ab[0] != ab[1]][:3]
    assert not tab.own_errors() and not tab.external, (tab.own_errors(), tab.external)


@pytest.mark.parametrize("pair", ["de-en", "zh-en"])
def test_beam_search_equals_the_python_beam_search(tab, pair: str):
    """Beam search with 4 beams and the model's length penalty, on fewer sentences (slower)."""
    info = need(pair)
    sources, _ = test_sentences(pair, 40)
    ref_ids, _ = python_greedy(info["checkpoint"], sources, beam_size=4)
    page = tab.translate(pair, sources, 4)
    same = sum(p["ids"] == r for p, r in zip(page, ref_ids, strict=True))
    assert same >= 0.95 * len(sources), f"{same}/{len(sources)} equal"


@pytest.mark.parametrize("pair", ["de-en", "zh-en"])
def test_the_tokenizer_port_equals_the_tokenizer(tab, pair: str):
    """Every test sentence, and text that exercises its corners, in the same ids."""
    from transformer_tutorial.tokens import encode
    from transformer_tutorial.translator.checkpoint import load_checkpoint

    info = need(pair)
    tokenizer = load_checkpoint(info["checkpoint"])[2]
    sources, _ = test_sentences(pair, 10_000)
    corners = ["a  b", "   x", "Ein <unk> und <eos>!", "😀 Hund", "我們說國語", "ｆｕｌｌ？",
               "<img src=x onerror=alert(1)>", "Straße—„Zitat“ (1,5 €)", "e\u0301t\u00e9"]  # fmt: skip
    texts = sources + corners
    page = tab.tab.evaluate("([p, t]) => translatorForTests.encode(p, t)", [pair, texts])
    python = encode(tokenizer, texts)
    wrong = [(t, a, b) for t, a, b in zip(texts, page, python, strict=True) if a != b]
    assert not wrong, f"{len(wrong)} of {len(texts)} differ, e.g. {wrong[:3]}"


def test_the_models_load_on_first_use_only(browser):
    """Opening the page loads its script, no model; the first translation loads one pair."""
    t = Tab(browser)
    try:
        assert not [u for u in t.requests if u.endswith(("de-en.js", "zh-en.js"))]
        pair = next(iter(manifest()["models"]), None)
        if pair is None:
            pytest.skip("this build has no model")
        t.submit("Ein Hund." if pair == "de-en" else "一只狗。", pair)
        loaded = [u for u in t.requests if u.endswith(("de-en.js", "zh-en.js"))]
        assert [u.rsplit("/", 1)[1] for u in loaded] == [f"{pair}.js"]
        assert not t.own_errors() and not t.external
    finally:
        t.close()


def test_hover_and_keyboard_focus_light_the_right_row(tab):
    need("de-en")
    tab.submit("Ein Mann fährt mit dem Fahrrad.", "de-en")
    rows = tab.tab.locator(".tta tr[data-i]")
    assert rows.count() >= 3
    tab.tab.hover('.tta th.tta-q[data-i="2"]')
    lit = tab.tab.eval_on_selector_all(".tta tr.tta-on", "rs => rs.map(r => r.dataset.i)")
    assert lit == ["2"]
    token = tab.text('.tta th.tta-q[data-i="2"]')
    assert token in tab.text(".tta-readout") and "query 3" in tab.text(".tta-readout")
    tab.tab.focus('.tta th.tta-q[data-i="0"]')
    tab.tab.keyboard.press("Tab")  # keyboard focus moves on to the next token of the table
    focused = tab.tab.evaluate(
        "document.activeElement.dataset.i ?? document.activeElement.dataset.j"
    )
    lit = tab.tab.eval_on_selector_all(".tta tr.tta-on, .tta th.tta-on", "rs => rs.length")
    assert focused is not None and lit == 1
    tab.tab.focus('.tta th.tta-q[data-i="1"]')
    lit = tab.tab.eval_on_selector_all(".tta tr.tta-on", "rs => rs.map(r => r.dataset.i)")
    assert lit == ["1"]
    # another head recolours the map; the cells show weights (not all white)
    tab.tab.select_option('.tta select[data-k="h"]', "1")
    colours = tab.tab.eval_on_selector_all(".tta td", "ds => ds.map(d => d.style.backgroundColor)")
    assert len(set(colours)) > 1
    assert not tab.own_errors()


BAD = {
    "markup": "<img src=x onerror=alert(1)>",
    "emoji": "😀🐶🚲",
    "wrong language": "The dog runs across the meadow.",
    "Traditional": "我們明天去公園散步。",
}


def test_bad_input_gets_a_message_or_a_translation(tab):
    need("de-en")
    tab.submit("   ", "de-en")
    assert tab.text(".tt-status") == "Type a sentence first." and not tab.text(".tt-output")
    for name, text in BAD.items():
        pair = "zh-en" if name == "Traditional" and "zh-en" in manifest()["models"] else "de-en"
        tab.submit(text, pair)
        assert "s," in tab.text(".tt-status"), (name, tab.text(".tt-status"))
        # typed text and tokens are text: no element made of them, no script run
        assert tab.tab.locator("#tt-app img").count() == 0, name
    assert not tab.dialogs
    tab.submit(BAD["emoji"], "de-en")
    assert "unknown to the model" in tab.text(".tt-notes")
    assert "<unk>" in tab.text(".tta")  # the unknown token, shown as text


def test_five_thousand_characters_are_cut_like_the_cli_cuts_them_and_the_page_answers(tab):
    limit = need("de-en")["max_len"] - 1
    long = ("Ein Hund läuft über die Wiese und ein Mann fährt Fahrrad. " * 90)[:5000]
    t = tab.tab
    t.select_option(".tt-search", "1")
    t.fill(".tt-input", long)
    t.evaluate("window.__longTasks = []")
    t.click(".tt-go")
    t.wait_for_function("() => !document.querySelector('.tt-go').disabled", timeout=300_000)
    # the page kept answering: the work ran in short steps (a browser "long task" is > 50 ms;
    # a loaded machine stretches a step, a blocking translation would be one task of seconds)
    longest = max(t.evaluate("window.__longTasks"), default=0)
    assert longest < 1000, f"the page froze for {longest:.0f} ms"
    assert f"was cut to its first {limit} tokens" in tab.text(".tt-notes")
    assert tab.text(".tt-output")
    assert not tab.own_errors() and not tab.dialogs


def test_the_chinese_page_speaks_chinese_and_translates(browser):
    t = Tab(browser, "zh/" + PAGE)
    try:
        assert t.text(".tt-go") == "翻译"
        pair = "zh-en" if "zh-en" in manifest()["models"] else None
        if pair is None:
            pytest.skip("this build has no zh-en model")
        t.submit("我们明天去公园散步。", "zh-en")
        assert "用时" in t.text(".tt-status") and t.text(".tt-output")
        assert "交叉注意力" in t.text(".tta")
        t.submit("", "zh-en")
        assert t.text(".tt-status") == "请先输入一个句子。"
        assert not t.own_errors() and not t.external
    finally:
        t.close()
