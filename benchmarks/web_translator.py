"""The "Try the translator" page: its weight, the time to its first translation and per sentence
in headless Chromium (opened as a file, network blocked), and its agreement with PyTorch; and,
beside it, what ONNX Runtime Web would weigh and whether it loads from a file at all.

    .venv/bin/python benchmarks/web_translator.py --html _build/html        # the built book
    .venv/bin/python benchmarks/web_translator.py --de-en runs/ship-de-en --zh-en runs/ship-zh-en
    .venv/bin/python benchmarks/web_translator.py --html _build/html --ort  # + ORT Web (npm)

With checkpoints instead of ``--html``, the assets are written into a scratch page by
tools/web_translator.py. ``--ort`` installs ``onnxruntime-web`` from the npm registry into a
scratch folder (or reads ``--ort-dist DIR``), adds up the files a page would need, and opens a page
that loads it from ``file://``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, command_line, environment, markdown_table, write_json


def _load_tool():
    """tools/web_translator.py, under a name of its own (benchmarks/ has a script of the same
    name)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "tools_web_translator", ROOT / "tools" / "web_translator.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["tools_web_translator"] = module
    spec.loader.exec_module(module)
    return module


web_translator = sys.modules.get("tools_web_translator") or _load_tool()

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHELL = (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"></head><body>'
    '<div id="tt-app"></div><link rel="stylesheet" href="_static/translator/page.css">'
    '<script src="_static/translator/page.js"></script></body></html>'
)
ORT_FILES = ("ort.wasm.min.js", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
ORT_PROBE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<script src="ort.wasm.min.js"></script><script>
window.probe = (async () => {
  try { ort.env.wasm.numThreads = 1; await ort.InferenceSession.create(new Uint8Array([8, 1]));
        return "loaded"; }
  catch (e) { return String(e && e.message || e); }
})();
</script></body></html>"""


def sentences(pair: str, n: int) -> list[str]:
    from transformer_tutorial.data import PAIRS

    return [s for s, _ in PAIRS[pair].load("test")[:n]]


def references(pair: str, n: int) -> list[str]:
    from transformer_tutorial.data import PAIRS

    return [PAIRS[pair].reference(t) for _, t in PAIRS[pair].load("test")[:n]]


def launch(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])


def offline_page(browser, url: str):
    ctx = browser.new_context()
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    tab = ctx.new_page()
    errors = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(url, wait_until="load")
    return ctx, tab, errors


def measure_page(html: Path, page: str, n: int, beams: list[int], agree: bool) -> dict:
    from playwright.sync_api import sync_playwright

    from transformer_tutorial.decoding import corpus_bleu

    man = json.loads((html / "_static" / "translator" / "manifest.json").read_text())
    static = html / "_static" / "translator"
    weight = {
        f.name: f.stat().st_size for f in sorted(static.iterdir()) if f.suffix in (".js", ".css")
    }
    gz = {name: len(gzip.compress((static / name).read_bytes())) for name in weight}
    url = (html / page).as_uri()
    results = []
    with sync_playwright() as p:
        browser = launch(p)
        for pair, info in man["models"].items():
            texts = sentences(pair, n)
            ctx, tab, errors = offline_page(browser, url)
            t0 = time.perf_counter()  # time to first translation: model script, parse, one sentence
            tab.evaluate("([p, t]) => translatorForTests.translate(p, t)", [pair, texts[:1]])
            first = time.perf_counter() - t0
            row = {"pair": pair, "step": info["step"], "first_translation_s": first}
            for beam in beams:
                t0 = time.perf_counter()
                out = tab.evaluate(
                    "([p, t, b]) => translatorForTests.translate(p, t, b)", [pair, texts, beam]
                )
                row[f"ms_per_sentence_beam{beam}"] = 1000 * (time.perf_counter() - t0) / len(texts)
                if beam == 1 and agree:
                    ids, ref_texts = web_translator.reference_greedy(info["checkpoint"], texts)
                    same = sum(o["ids"] == r for o, r in zip(out, ids, strict=True))
                    row["greedy_equal_tokens"] = same / len(texts)
                    refs = references(pair, n)
                    row["bleu_page"] = corpus_bleu([o["text"] for o in out], refs)[0].score
                    row["bleu_python"] = corpus_bleu(ref_texts, refs)[0].score
            row["console_errors"] = errors
            results.append(row)
            ctx.close()
        browser.close()
    return {"bytes": weight, "gzip_bytes": gz, "pairs": results}


def measure_ort(dist: Path | None) -> dict:
    """The files a page needs for ONNX Runtime Web's WebAssembly backend, and a file:// probe."""
    from playwright.sync_api import sync_playwright

    scratch = Path(tempfile.mkdtemp(prefix="ort-web-"))
    try:
        if dist is None:
            if not shutil.which("npm"):
                return {"error": "npm is not installed"}
            subprocess.run(
                ["npm", "install", "--silent", "--no-audit", "--no-fund", "--no-save", "onnxruntime-web"],
                cwd=scratch, check=True, capture_output=True, timeout=600,
            )  # fmt: skip
            dist = scratch / "node_modules" / "onnxruntime-web" / "dist"
        version = json.loads((dist.parent / "package.json").read_text())["version"]
        site = scratch / "site"
        site.mkdir()
        for name in ORT_FILES:
            shutil.copy(dist / name, site / name)
        (site / "index.html").write_text(ORT_PROBE)
        with sync_playwright() as p:
            browser = launch(p)
            ctx, tab, errors = offline_page(browser, (site / "index.html").as_uri())
            probe = tab.evaluate("window.probe")
            ctx.close()
            browser.close()
        return {
            "version": version,
            "bytes": {name: (dist / name).stat().st_size for name in ORT_FILES},
            "file_url": probe,
            "console_errors": errors[:2],
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--html", type=Path, help="a built book (make book): its translator page")
    p.add_argument("--de-en", dest="de_en", help="a de-en checkpoint (instead of --html)")
    p.add_argument("--zh-en", dest="zh_en", help="a zh-en checkpoint (instead of --html)")
    p.add_argument("--sentences", type=int, default=100, help="test sentences per pair")
    p.add_argument("--beam", type=int, nargs="+", default=[1, 4], help="beam sizes (1 = greedy)")
    p.add_argument("--no-agreement", action="store_true", help="skip the PyTorch comparison")
    p.add_argument("--ort", action="store_true", help="also measure ONNX Runtime Web (npm)")
    p.add_argument("--ort-dist", type=Path, help="onnxruntime-web's dist/ folder, if installed")
    p.add_argument("--json", help="also write the numbers here")
    args = p.parse_args(argv)
    scratch = None
    if args.html:
        html, page = args.html, "book/try_translator.html"
    elif args.de_en or args.zh_en:
        scratch = Path(tempfile.mkdtemp(prefix="web-translator-"))
        html, page = scratch, "index.html"
        (scratch / page).write_text(SHELL, encoding="utf-8")
        ckpts = {"de-en": args.de_en, "zh-en": args.zh_en}
        web_translator.write_assets(scratch, {k: v and Path(v) for k, v in ckpts.items() if v})
    else:
        raise SystemExit("give --html _build/html (a built book) or checkpoints (--de-en, --zh-en)")
    try:
        page_numbers = measure_page(html, page, args.sentences, args.beam, not args.no_agreement)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    ort = measure_ort(args.ort_dist) if (args.ort or args.ort_dist) else None

    mb = 1e6
    print("## Page weight (loaded by the translator page only; models on first use)\n")
    rows = [
        [n, f"{b / mb:.3f}", f"{page_numbers['gzip_bytes'][n] / mb:.3f}"]
        for n, b in page_numbers["bytes"].items()
    ]
    total = sum(page_numbers["bytes"].values())
    rows.append(
        ["total", f"{total / mb:.3f}", f"{sum(page_numbers['gzip_bytes'].values()) / mb:.3f}"]
    )
    print(markdown_table(["file", "MB", "MB gzipped"], rows) + "\n")
    print("## Plain JavaScript in headless Chromium (file://, no network)\n")
    heads = ["pair", "step", "first translation (s)"] + [f"ms/sentence beam {b}" for b in args.beam]
    if not args.no_agreement:
        heads += ["greedy = PyTorch", "BLEU page", "BLEU PyTorch"]
    rows = []
    for r in page_numbers["pairs"]:
        row = [r["pair"], r["step"], f"{r['first_translation_s']:.2f}"]
        row += [f"{r[f'ms_per_sentence_beam{b}']:.0f}" for b in args.beam]
        if not args.no_agreement:
            row += [
                f"{100 * r['greedy_equal_tokens']:.1f} %",
                f"{r['bleu_page']:.2f}",
                f"{r['bleu_python']:.2f}",
            ]
        rows.append(row)
    print(markdown_table(heads, rows) + "\n")
    if ort:
        print("## ONNX Runtime Web (WebAssembly backend)\n")
        if "error" in ort:
            print(ort["error"] + "\n")
        else:
            rows = [[n, f"{b / mb:.3f}"] for n, b in ort["bytes"].items()]
            rows.append(["total, before any model", f"{sum(ort['bytes'].values()) / mb:.3f}"])
            print(markdown_table(["file", "MB"], rows) + "\n")
            print(f"onnxruntime-web {ort['version']} opened from file://: {ort['file_url']}\n")
    payload = {
        "command": command_line("web_translator", argv),
        "environment": environment(__import__("torch").device("cpu")),
        "sentences": args.sentences,
        "page": page_numbers,
        "ort_web": ort,
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
