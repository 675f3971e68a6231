"""Sphinx extension for the two editions: a link at the top of every page to the same page in
the other language, and the part captions of the table of contents translated.

The English edition is built into ``_build/html/`` and the Chinese one into
``_build/html/zh/`` (``tools/i18n.py build``), page for page, so the other edition's page is
found by adding or removing one ``zh/`` level of the same path.

Sphinx translates a page's messages (its ``Locale`` transform, priority 20) before
sphinx-external-toc inserts the toctrees of ``_toc.yml`` (priority 100), so the part captions
("Part I: ...") would stay English in the navigation; ``TranslateTocCaptions`` translates them
from the root page's catalog, where the gettext builder put them.
"""

from __future__ import annotations

from os import path

from docutils import nodes
from sphinx import addnodes
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain

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


class TranslateTocCaptions(SphinxTransform):
    default_priority = 150  # after InsertToctrees (100), before the toctrees are collected

    def apply(self, **kwargs) -> None:
        if not self.config.language or self.config.language == "en":
            return
        domain = docname_to_domain(self.env.docname, self.config.gettext_compact)
        dirs = [path.join(self.env.srcdir, d) for d in self.config.locale_dirs]
        catalog, found = init_locale(dirs, self.config.language, domain)
        if not found:
            return
        for toctree in self.document.findall(addnodes.toctree):
            caption = toctree.get("caption")
            if caption and catalog.gettext(caption) != caption:
                toctree["caption"] = toctree["rawcaption"] = catalog.gettext(caption)


class TableCellSources(SphinxTransform):
    """The text of a table nested in a directive (a table inside an answer's dropdown) comes from
    MyST without a source file, and Sphinx neither extracts nor translates a text without one: such
    a cell would stay English in the Chinese edition. Each gets its page as its source, before
    Sphinx's ``Locale`` transform (priority 20) and its gettext builder look for messages."""

    default_priority = 19

    def apply(self, **kwargs) -> None:
        for table in self.document.findall(nodes.table):
            for node in table.findall(nodes.TextElement):
                if not node.source and node.rawsource:
                    node.source = self.document["source"]


def setup(app):
    app.add_transform(TableCellSources)
    app.add_transform(TranslateTocCaptions)
    app.connect("doctree-resolved", add_switch)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
