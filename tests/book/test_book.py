"""Checks on the book's sources: notebook/Markdown pairs in sync, exported modules up to date,
the table of contents complete, every notebook starting with the Colab install cell, the glossary
current."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml
from toc import toc_files

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
NOTEBOOKS = sorted(BOOK.glob("[0-9]*.ipynb"))


def _cells(path: Path) -> list[tuple[str, str]]:
    nb = jupytext.read(path)
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def test_there_are_chapters():
    assert NOTEBOOKS, "no chapter notebooks found in book/"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_markdown_twin_in_sync(notebook: Path):
    twin = notebook.with_suffix(".md")
    assert twin.exists(), (
        f"{twin.name} is missing; run `jupytext --set-formats ipynb,md:myst {notebook}`"
    )
    assert _cells(notebook) == _cells(twin), (
        f"{notebook.name} and {twin.name} differ. Edit one, then copy it over the other with "
        f"`jupytext --to ipynb --update {twin}` (or `--to md:myst {notebook}`), and re-execute."
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_executed_and_reproducible(notebook: Path):
    nb = nbformat.read(notebook, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{notebook.name} has no code"
    assert all(c.execution_count is not None for c in code), (
        f"{notebook.name} has unexecuted cells; run `make execute NB={notebook.relative_to(ROOT)}`"
    )
    first = code[0].source
    assert "import transformer_tutorial" in first and "pip install" in first, (
        f"the first code cell of {notebook.name} must install the package when it is not importable"
    )
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    assert repo.split("github.com/")[1] in first, (
        f"{notebook.name}'s install cell must use the repository URL of _config.yml ({repo})"
    )


def test_exported_modules_match_notebooks():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "export.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_toc_lists_every_chapter_and_only_existing_files():
    files = toc_files()
    for f in files:
        path = ROOT / f
        assert path.exists() or path.with_suffix(".md").exists(), f"_toc.yml names missing {f}"
    listed = {ROOT / f for f in files}
    for nb in NOTEBOOKS:
        assert nb in listed, f"{nb.name} is not in _toc.yml"


def test_every_chapter_with_exercises_has_its_solutions_page():
    """A chapter that sets exercises has ``NN_name_solutions`` as its section in _toc.yml, and the
    chapter links to it, so that a reader who tried can check."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    sections = {
        chapter["file"]: [s["file"] for s in chapter.get("sections", [])]
        for part in toc["parts"]
        for chapter in part["chapters"]
    }
    for nb in NOTEBOOKS:
        if (
            nb.stem.endswith("_solutions")
            or "## Exercises" not in nb.with_suffix(".md").read_text()
        ):
            continue
        solutions = f"book/{nb.stem}_solutions.ipynb"
        assert solutions in sections.get(f"book/{nb.name}", []), (
            f"{nb.name} sets exercises but _toc.yml has no {solutions} under it"
        )
        assert f"{{doc}}`{nb.stem}_solutions`" in nb.with_suffix(".md").read_text(), (
            f"{nb.name} does not link to its solutions ({{doc}}`{nb.stem}_solutions`)"
        )


def test_glossary_is_current():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "glossary.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_nbval_verifies_under_other_numerics_than_the_stored_outputs():
    """The standing "any machine" check: `make nbval` must not verify with the kernels and thread
    count `make execute` stores with, or a digit that only holds on one machine goes unnoticed."""
    dry = {
        target: subprocess.run(
            ["make", "-n", target, "NB=book/x.ipynb"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for target in ("nbval", "execute")
    }
    assert "ATEN_CPU_CAPABILITY=default" in dry["nbval"] and "MKL_CBWR=COMPATIBLE" in dry["nbval"]
    assert "OMP_NUM_THREADS=1" in dry["nbval"] and "OMP_NUM_THREADS=2" in dry["execute"]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_code_fits_the_page(notebook: Path):
    """The rendered text column fits 100 characters of code; a longer line scrolls sideways."""
    sys.path.insert(0, str(ROOT / "tools"))
    from format_notebooks import long_lines

    too_long = long_lines(notebook)
    assert not too_long, (
        f"lines longer than 100 characters (run `python tools/format_notebooks.py {notebook}` "
        "and shorten comments and strings by hand):\n" + "\n".join(too_long)
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_uses_the_book_style(notebook: Path):
    source = "\n".join(c.source for c in nbformat.read(notebook, as_version=4).cells)
    if "plt." in source:
        assert "use_book_style()" in source, f"{notebook.name} plots without use_book_style()"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_prints_its_time_at_the_end(notebook: Path):
    nb = nbformat.read(notebook, as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert "print(clock)" in last.source, f"{notebook.name}: the last code cell prints the clock"
    assert "nbval-ignore-output" in last.metadata.get("tags", []), (
        f"{notebook.name}: the clock's output varies; tag its cell nbval-ignore-output"
    )


def test_no_line_break_inside_chinese_text():
    """A line break inside a paragraph renders as a space, which Chinese text never has: a
    quotation of the notes broken across two lines reads "目标 序列" on the page."""
    cjk = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
    broken = []
    for page in sorted((ROOT / "book").glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, (line, after) in enumerate(itertools.pairwise(lines), start=1):
            after = after.lstrip("> ").lstrip()
            if line.rstrip() and after and cjk.match(line.rstrip()[-1]) and cjk.match(after[0]):
                broken.append(f"{page.name}:{number}")
    assert not broken, f"Chinese text broken across lines at {broken}"
