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
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from .plotting import PALETTE

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


def diagram(
    width: float = 7.0,
    height: float = 3.0,
    xlim: tuple[float, float] = (0, 14),
    ylim: tuple[float, float] = (0, 6),
    title: str | None = None,
):
    """A figure with one frameless axes whose data coordinates are ``xlim`` × ``ylim``."""
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
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
    kwargs.setdefault("ha", "center")
    kwargs.setdefault("va", "center")
    kwargs.setdefault("color", "#444444")
    ax.text(*xy, text, fontsize=fontsize, **kwargs)
