"""Small drawing helpers for the book's diagrams: boxes for modules, arrows for tensors, grids for
masks, in the book's plotting style.

Hand-written (not generated from a notebook).

A diagram lives in data coordinates of an axes with no frame, so a chapter places its boxes on a
grid of its own choosing::

    fig, ax = diagram(width=7, height=3, xlim=(0, 14), ylim=(0, 6))
    q = box(ax, (1, 3), "Q  (B, T, Dh)", kind="tensor")
    s = box(ax, (5, 3), "Q Kᵀ / √Dh", kind="attention")
    arrow(ax, q.right, s.left)

Every label is text, so the picture uses the package's names and the book's dimension letters.

The labels are written in English and drawn in the language of
``transformer_tutorial.language``: in Chinese (``set_language("zh_CN")``, as the Chinese
notebooks do), every text of a figure that these helpers draw on (titles and ``ax.text`` included)
is looked up, when the figure is drawn, in the catalog ``locale/zh_CN/LC_MESSAGES/diagrams.po``
of the package, keyed by the English label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.text import Text

from .language import language, translate
from .plotting import PALETTE, find_cjk_font

# Fill colours by the role of a box: light tints, so black text stays readable on every one.
FILLS = {
    "tensor": "#FFFFFF",
    "embedding": "#FCE8C8",  # orange tint
    "attention": "#CFE3F3",  # blue tint
    "feedforward": "#D3EFE4",  # green tint
    "norm": "#F2F2C6",  # yellow tint
    "recurrent": "#EBD5E3",  # purple tint
    "output": "#F7D7C6",  # vermillion tint
    "cache": "#DCEEFB",  # sky tint
    "plain": "#EEEEEE",
}
EDGE = "#333333"


@dataclass(frozen=True)
class Box:
    """Where a drawn box is, so that arrows can start and end on its sides."""

    x: float  # centre
    y: float
    w: float
    h: float

    @property
    def left(self) -> tuple[float, float]:
        return (self.x - self.w / 2, self.y)

    @property
    def right(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y)

    @property
    def top(self) -> tuple[float, float]:
        return (self.x, self.y + self.h / 2)

    @property
    def bottom(self) -> tuple[float, float]:
        return (self.x, self.y - self.h / 2)


class _DiagramFigure(Figure):
    """A figure whose texts are drawn in the language in use (English as written otherwise)."""

    def draw(self, renderer) -> None:
        if language() != "en":
            for text in self.findobj(Text):
                text.set_text(translate(text.get_text()))
                _mixed_with_math(text)
        super().draw(renderer)

    def __repr__(self) -> str:  # a plain Figure's, so that a stored output reads the same
        return super().__repr__().replace(type(self).__name__, "Figure", 1)


def labels(fig: Figure) -> list[str]:
    """The texts a figure shows, in drawing order: titles, ``ax.text`` and the axes' labels and
    tick labels where the axes are on (for comparing a drawn diagram with a stored one)."""
    shown = [fig._suptitle, *fig.texts]
    for ax in fig.axes:
        shown += [ax.title, ax._left_title, ax._right_title, *ax.texts]
        if ax.axison:
            shown += [ax.xaxis.label, ax.yaxis.label]
            shown += [*ax.get_xticklabels(), *ax.get_yticklabels()]
        legend = ax.get_legend()
        if legend is not None:
            shown += legend.get_texts()
    return [t.get_text() for t in shown if t is not None and t.get_visible() and t.get_text()]


def _mixed_with_math(text: Text) -> None:
    """Chinese beside $math$: matplotlib draws the words of such a text in one font (the first
    of the text's families) and does not fall back glyph by glyph, so the Chinese font comes
    first there (it has Latin letters too); the math keeps the math font."""
    s = text.get_text()
    if s.count("$") >= 2 and re.search("[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", s):
        cjk = find_cjk_font()
        if cjk and text.get_fontfamily()[0] != cjk:
            text.set_fontfamily([cjk, *text.get_fontfamily()])


def _in_language(ax) -> None:
    """Make the figure of ``ax`` a ``_DiagramFigure`` (a figure made by ``plt.subplots``
    that these helpers draw on is a diagram too)."""
    fig = ax.figure
    if type(fig) is Figure:
        fig.__class__ = _DiagramFigure


def diagram(
    width: float = 7.0,
    height: float = 3.0,
    xlim: tuple[float, float] = (0, 14),
    ylim: tuple[float, float] = (0, 6),
    title: str | None = None,
):
    """A figure with one frameless axes whose data coordinates are ``xlim`` × ``ylim``."""
    fig, ax = plt.subplots(
        figsize=(width, height), layout="constrained", FigureClass=_DiagramFigure
    )
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    return fig, ax


def box(
    ax,
    xy: tuple[float, float],
    text: str,
    w: float = 2.4,
    h: float = 0.9,
    kind: str = "plain",
    fontsize: float = 10,
    dashed: bool = False,
) -> Box:
    """Draw a rounded box centred at ``xy`` with ``text`` inside; return its :class:`Box`."""
    _in_language(ax)
    if kind not in FILLS:
        raise ValueError(f"kind must be one of {sorted(FILLS)}, got {kind!r}")
    x, y = xy
    patch = FancyBboxPatch(
        (x - w / 2, y - h / 2),
        w,
        h,
        boxstyle="round,pad=0.02,rounding_size=0.15",
        facecolor=FILLS[kind],
        edgecolor=EDGE,
        linewidth=1.2,
        linestyle="--" if dashed else "-",
    )
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)
    return Box(x, y, w, h)


def region(
    ax,
    xy: tuple[float, float],
    w: float,
    h: float,
    label: str = "",
    color: str = PALETTE[0],
    label_pos: str = "top",
) -> None:
    """Draw a dashed frame around a group of boxes (a layer repeated N times, an encoder)."""
    _in_language(ax)
    x, y = xy
    ax.add_patch(
        FancyBboxPatch(
            (x, y),
            w,
            h,
            boxstyle="round,pad=0.05,rounding_size=0.25",
            facecolor="none",
            edgecolor=color,
            linewidth=1.5,
            linestyle="--",
        )
    )
    if label:
        if label_pos == "top":
            ax.text(x + w / 2, y + h + 0.15, label, ha="center", va="bottom", color=color)
        elif label_pos == "left":
            ax.text(x - 0.15, y + h / 2, label, ha="right", va="center", color=color)
        else:
            ax.text(x + w + 0.15, y + h / 2, label, ha="left", va="center", color=color)


def arrow(
    ax,
    start: tuple[float, float],
    end: tuple[float, float],
    label: str | None = None,
    color: str = EDGE,
    curve: float = 0.0,
    label_side: str = "right",
    fontsize: float = 9,
    dashed: bool = False,
) -> None:
    """Draw an arrow from ``start`` to ``end``, optionally labelled (e.g. with a shape)."""
    _in_language(ax)
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=12,
            color=color,
            linewidth=1.3,
            linestyle="--" if dashed else "-",
            connectionstyle=f"arc3,rad={curve}",
            shrinkA=1,
            shrinkB=1,
        )
    )
    if label:
        mx, my = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
        vertical = abs(end[0] - start[0]) < abs(end[1] - start[1])
        if vertical:
            dx, ha, va = (
                (0.12, "left", "center") if label_side == "right" else (-0.12, "right", "center")
            )
            ax.text(mx + dx, my, label, ha=ha, va=va, fontsize=fontsize, color="#444444")
        else:
            ax.text(
                mx, my + 0.12, label, ha="center", va="bottom", fontsize=fontsize, color="#444444"
            )


def grid(
    ax,
    values,
    xy: tuple[float, float],
    cell: float = 0.5,
    row_labels: list[str] | None = None,
    col_labels: list[str] | None = None,
    on_color: str = PALETTE[0],
    off_color: str = "#FFFFFF",
    fontsize: float = 9,
    title: str | None = None,
) -> None:
    """Draw a boolean (or 0–1) matrix as a grid of cells, top-left corner at ``xy``.

    Cells with value 1 (True, "may attend" for a mask) are filled with ``on_color``; fractional
    values are blended with ``off_color``, so a matrix of attention weights draws as shades.
    """
    _in_language(ax)
    values = np.asarray(values, dtype=float)
    rows, cols = values.shape
    x0, y0 = xy
    on = np.array(plt.matplotlib.colors.to_rgb(on_color))
    off = np.array(plt.matplotlib.colors.to_rgb(off_color))
    for i in range(rows):
        for j in range(cols):
            v = float(np.clip(values[i, j], 0.0, 1.0))
            ax.add_patch(
                Rectangle(
                    (x0 + j * cell, y0 - (i + 1) * cell),
                    cell,
                    cell,
                    facecolor=tuple(off + v * (on - off)),
                    edgecolor="#999999",
                    linewidth=0.8,
                )
            )
    for i, name in enumerate(row_labels or []):
        ax.text(x0 - 0.1, y0 - (i + 0.5) * cell, name, ha="right", va="center", fontsize=fontsize)
    for j, name in enumerate(col_labels or []):
        ax.text(x0 + (j + 0.5) * cell, y0 + 0.1, name, ha="center", va="bottom", fontsize=fontsize)
    if title:
        dy = 0.45 if col_labels else 0.15
        ax.text(x0 + cols * cell / 2, y0 + dy, title, ha="center", va="bottom")


def note(ax, xy: tuple[float, float], text: str, fontsize: float = 9, **kwargs) -> None:
    """Free text in the diagram (an explanation, a formula), grey and small."""
    _in_language(ax)
    kwargs.setdefault("ha", "center")
    kwargs.setdefault("va", "center")
    kwargs.setdefault("color", "#444444")
    ax.text(*xy, text, fontsize=fontsize, **kwargs)
