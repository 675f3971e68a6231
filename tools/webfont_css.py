"""Rewrite a @fontsource stylesheet for the book: woff2 files only, next to the stylesheet.

    python tools/webfont_css.py node_modules/@fontsource/noto-sans-sc/400.css > _vendor/fonts/noto-sans-sc.css

Each @font-face keeps its unicode-range, so a browser downloads only the pieces of the font that
the characters on a page need. Used by `make book`; the font files themselves are never committed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def rewrite(css: str, folder: str = "noto-sans-sc") -> str:
    def src(match: re.Match) -> str:
        woff2 = re.search(r"url\(\./files/([^)]+\.woff2)\)", match.group(0))
        if woff2 is None:
            raise ValueError(f"no woff2 file in: {match.group(0)[:120]}")
        return f"src: url({folder}/{woff2.group(1)}) format('woff2');"

    out, count = re.subn(r"src:[^;]+;", src, css)
    if count == 0:
        raise ValueError("no @font-face src found: is this a @fontsource stylesheet?")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.stdout.write(rewrite(Path(sys.argv[1]).read_text()))
