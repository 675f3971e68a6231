"""One plotting style for every figure in the book.

Hand-written (not generated from a notebook).

Call :func:`use_book_style` once at the top of a notebook. It sets

- the size: figures 7 inches wide at 100 dpi are 700 CSS pixels, the width of the book's text
  column, so a page never shrinks them and their 10-point labels stay about 14 pixels high;
- the resolution: notebooks draw "retina" PNGs (twice the pixels), sharp on every screen;
- a colour-blind-safe palette (Okabe and Ito's eight colours) and lines that are thick enough;
- a font that writes Chinese as Chinese, where one is installed (see :func:`find_cjk_font`).

Legends go beside or below the data, never on it: use :func:`legend_outside`.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import matplotlib as mpl
from matplotlib import font_manager

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision
# deficiency. Black is last so that it is used for reference lines rather than data.
PALETTE = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)
# A sequential colour map that is readable in grey and by colour-blind readers (heatmaps, masks).
SEQUENTIAL_CMAP = "viridis"
DIVERGING_CMAP = "RdBu_r"

FIG_WIDTH = 7.0  # inches; at 100 dpi this is the 700 px text column of the rendered book
FIG_HEIGHT = 3.2
BASE_FONT_SIZE = 11  # points; at 100 dpi 11 pt is about 15 px, 9 pt (the smallest used) 12.5 px

# Fonts with Chinese glyphs, in order of preference: files (Debian's packages, and the copy that
# `make install` puts in the virtual environment), then family names of the fonts that ship with
# macOS, Windows and common Linux desktops.
CJK_FONT_FILES = (
    Path(sys.prefix) / "share" / "fonts" / "wqy-microhei.ttc",
    Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc"),
)
CJK_FONT_FAMILIES = (
    "WenQuanYi Micro Hei",
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "PingFang SC",
    "Hiragino Sans GB",
    "Heiti SC",
    "Microsoft YaHei",
    "SimHei",
    "Arial Unicode MS",
)
CJK_INSTALL_HINT = (
    "No font with Chinese glyphs was found, so Chinese labels in figures will show as boxes. "
    "Install one: `apt-get install fonts-wqy-microhei` (Debian/Ubuntu, also in Colab with `!`), "
    "`dnf install wqy-microhei-fonts` (Fedora); macOS and Windows already have one."
)


def find_cjk_font() -> str | None:
    """Return the family name of an installed font with Chinese glyphs, or ``None``."""
    for path in CJK_FONT_FILES:
        if path.exists():
            font_manager.fontManager.addfont(str(path))
            return font_manager.FontProperties(fname=str(path)).get_name()
    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONT_FAMILIES if name in installed), None)


def use_book_style() -> str | None:
    """Set the book's plotting style for the rest of the session.

    Returns the family name of the Chinese font in use, or ``None`` when there is none (then
    Chinese draws as boxes and `python -m transformer_tutorial.doctor` says how to install one).
    """
    cjk = find_cjk_font()
    mpl.rcParams.update(
        {
            "figure.figsize": (FIG_WIDTH, FIG_HEIGHT),
            "figure.dpi": 100,
            "savefig.dpi": 200,
            "figure.constrained_layout.use": True,
            "font.size": BASE_FONT_SIZE,
            "axes.titlesize": BASE_FONT_SIZE + 1,
            "axes.labelsize": BASE_FONT_SIZE,
            "xtick.labelsize": BASE_FONT_SIZE - 1,
            "ytick.labelsize": BASE_FONT_SIZE - 1,
            "legend.fontsize": BASE_FONT_SIZE - 1,
            "legend.frameon": False,
            "axes.prop_cycle": mpl.cycler(color=PALETTE),
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "lines.linewidth": 2.0,
            "lines.markersize": 6,
            "image.cmap": SEQUENTIAL_CMAP,
            # DejaVu Sans for Latin text and mathtext; the CJK font fills in the Chinese glyphs
            # (matplotlib falls back glyph by glyph along a list of families, not along the
            # generic "sans-serif" alias).
            "font.family": ["DejaVu Sans", *([cjk] if cjk else [])],
            "axes.unicode_minus": cjk is None,
        }
    )
    if cjk is None:
        # Without a CJK font every Chinese glyph would add a warning to the cell's output.
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
    _draw_retina_pngs()
    return cjk


def _draw_retina_pngs() -> None:
    """In a notebook, store figures as PNGs with twice the pixels of their displayed size."""
    ipython = sys.modules.get("IPython")
    if ipython is None or ipython.get_ipython() is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats("retina")


def legend_outside(ax, where: str = "right", **kwargs) -> None:
    """Put the legend beside (``"right"``) or below (``"below"``) the axes, off the data."""
    if where == "right":
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)
    elif where == "below":
        handles, _ = ax.get_legend_handles_labels()
        ncol = kwargs.pop("ncol", min(len(handles), 4))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=ncol, **kwargs)
    else:
        raise ValueError(f"where must be 'right' or 'below', got {where!r}")
