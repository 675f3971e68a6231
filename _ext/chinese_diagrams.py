"""Sphinx extension for the Chinese edition: each chapter's opening diagram drawn in Chinese, and
the checker's verdicts said in Chinese.

The Chinese edition is built from the English notebooks (Sphinx translates their prose from the
catalogs). A chapter's opening diagram is a figure, not prose: ``tools/i18n.py notebooks`` draws
it with Chinese labels into the Chinese notebook ``zh/book/<page>.ipynb``, whose outputs of that
cell carry ``{"transformer_tutorial": {"language": "zh_CN", ...}}`` in their metadata (a cell
whose printed verdicts it says in Chinese carries it in the cell's own metadata). Before
MyST-NB reads a page of the Chinese build, this extension puts those outputs in place of the
English ones of the same cell (found by its cell id), and changes nothing else. Only
``tools/i18n.py build`` loads it (the English build shows the stored English outputs).
"""

from __future__ import annotations

import json
from pathlib import Path

DRAWN = "transformer_tutorial"


def chinese_outputs(notebook: dict, chinese: dict, language: str) -> int:
    """Replace in ``notebook`` the outputs of every cell that ``chinese`` stores drawn in
    ``language``; return how many cells were changed."""
    drawn = {
        cell.get("id"): cell["outputs"]
        for cell in chinese.get("cells", [])
        if cell.get("cell_type") == "code"
        and cell.get("outputs")
        and (all(o.get("metadata", {}).get(DRAWN, {}).get("language") == language
                 for o in cell["outputs"])
             or cell.get("metadata", {}).get(DRAWN, {}).get("language") == language)
    }  # fmt: skip
    changed = 0
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code" and cell.get("id") in drawn:
            cell["outputs"] = drawn[cell["id"]]
            changed += 1
    return changed


def swap_outputs(app, docname: str, source: list[str]) -> None:
    language = app.config.language
    if not language or language == "en":
        return
    path = Path(app.env.doc2path(docname))
    chinese = Path(app.srcdir) / "zh" / Path(path).relative_to(app.srcdir)
    if path.suffix != ".ipynb" or not chinese.exists():
        return
    notebook = json.loads(source[0])
    if chinese_outputs(notebook, json.loads(chinese.read_text(encoding="utf-8")), language):
        source[0] = json.dumps(notebook, ensure_ascii=False, indent=1)


def setup(app):
    app.connect("source-read", swap_outputs)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
