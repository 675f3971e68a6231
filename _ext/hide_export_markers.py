"""Sphinx extension: hide nbdev's `#| export` (and other `#| ...`) lines in rendered code cells.

The lines tell the export step which cells go into the package; to a reader of the book they are
noise. The notebooks keep them (the preface explains them once for readers who run the notebooks).
"""

from __future__ import annotations

import re

from docutils import nodes

MARKER = re.compile(r"^#\|.*(\n|$)", flags=re.MULTILINE)


def _in_code_cell(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if "cell_input" in parent.get("classes", []):
            return True
        parent = parent.parent
    return False


def strip_markers(app, doctree: nodes.document) -> None:
    for block in list(doctree.findall(nodes.literal_block)):
        text = block.astext()
        if not text.startswith("#|") and "\n#|" not in text:
            continue
        if not _in_code_cell(block):
            continue
        cleaned = MARKER.sub("", text).strip("\n")
        block.children = [nodes.Text(cleaned)]
        block.rawsource = cleaned


def setup(app):
    app.connect("doctree-read", strip_markers)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
