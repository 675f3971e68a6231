"""Make the code of chapter notebooks fit the page: the short install cell, ruff's formatting at
100 characters, the Markdown twin updated; then list the lines that are still too long (comments
and strings, which a formatter does not break — shorten those by hand).

    python tools/format_notebooks.py book/05_attention_pooling.ipynb [more.ipynb ...]

Outputs are kept: only code cell sources change, so stored outputs stay valid.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
MAX_LINE = 100  # the rendered text column fits 100 characters of code


def install_cell() -> str:
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    return (
        "# Colab and other fresh environments: install the book's package if it is missing.\n"
        "try:\n"
        "    import transformer_tutorial\n"
        "except ImportError:\n"
        f"    %pip install -q git+{repo}"
    )


def long_lines(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    found = []
    for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        for line in cell.source.splitlines():
            if len(line) > MAX_LINE:
                found.append(
                    f"{path.name} code cell {n + 1} ({len(line)} chars): {line.strip()[:70]}"
                )
    return found


def format_notebook(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    if "import transformer_tutorial" in first.source and "pip install" in first.source:
        first.source = install_cell()
    nbformat.write(nb, path)
    ruff = [sys.executable, "-m", "ruff", "format", "--line-length", str(MAX_LINE), str(path)]
    subprocess.run(ruff, check=True, capture_output=True)
    jupytext = [sys.executable, "-m", "jupytext", "--quiet", "--sync", str(path)]
    subprocess.run(jupytext, check=True)


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    remaining = []
    for p in paths:
        format_notebook(Path(p))
        remaining += long_lines(Path(p))
    for line in remaining:
        print(line)
    return 1 if remaining else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
