"""Sphinx extension: a link at the top of every page to the same page in the other language.

The English edition is built into ``_build/html/`` and the Chinese one into
``_build/html/zh/`` (``tools/i18n.py build``), page for page, so the other edition's page is
found by adding or removing one ``zh/`` level of the same path.
"""

from __future__ import annotations

from docutils import nodes

SWITCH = {  # this edition's language -> (the other edition's link text, its language)
    "en": ("中文", "zh-CN"),
    "zh_CN": ("English", "en"),
}


def other_edition(docname: str, language: str) -> str:
    """The relative URL of ``docname`` in the other edition, from this edition's page."""
    up = "../" * docname.count("/")
    if language == "zh_CN":
        return f"../{up}{docname}.html"
    return f"{up}zh/{docname}.html"


def add_switch(app, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    language = app.config.language or "en"
    text, lang = SWITCH.get(language, SWITCH["en"])
    href = other_edition(docname, language)
    html = (
        f'<p class="language-switch"><a href="{href}" hreflang="{lang}" lang="{lang}">'
        f"{text}</a></p>\n"
    )
    doctree.insert(0, nodes.raw("", html, format="html"))


def setup(app):
    app.connect("doctree-resolved", add_switch)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
