"""Rewrite a @fontsource stylesheet for the book: woff2 files only, next to the stylesheet.

    python tools/webfont_css.py node_modules/@fontsource/noto-sans-sc/400.css > _vendor/fonts/noto-sans-sc.css

Each @font-face keeps its unicode-range, so a browser downloads only the pieces of the font that
the characters on a page need; the ranges are cut down to Chinese, Japanese and Korean code
points (CJK_RANGES), so that the font can stand *first* in the book's font lists: Latin text keeps
the reader's system font, and Chinese is drawn by this one wherever it appears. (Placed after the
system fonts, Chromium drew the navigation's Chinese as boxes: it settled on a system fallback for
those characters before the web font had loaded and never looked again.) Used by `make book`; the
font files themselves are never committed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CJK_RANGES = [
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation: 、。《》「」
    (0x3100, 0x312F),  # Bopomofo
    (0x31C0, 0x31EF),  # CJK strokes
    (0x3200, 0x4DBF),  # enclosed CJK, compatibility, extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE10, 0xFE1F),  # vertical forms
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF00, 0xFFEF),  # fullwidth forms: ，：；（）！？
    (0x20000, 0x3FFFF),  # supplementary ideographs
]


def cjk_only(unicode_range: str) -> str:
    """``unicode_range`` (``U+4e00-4e0f,U+3001``) cut to the code points of CJK_RANGES."""
    kept = []
    for part in unicode_range.split(","):
        lo, _, hi = part.strip().upper().removeprefix("U+").partition("-")
        a, b = int(lo, 16), int(hi or lo, 16)
        for c, d in CJK_RANGES:
            x, y = max(a, c), min(b, d)
            if x <= y:
                kept.append(f"U+{x:x}" if x == y else f"U+{x:x}-{y:x}")
    return ",".join(kept)


def rewrite(css: str, folder: str = "noto-sans-sc") -> str:
    def src(match: re.Match) -> str:
        woff2 = re.search(r"url\(\./files/([^)]+\.woff2)\)", match.group(0))
        if woff2 is None:
            raise ValueError(f"no woff2 file in: {match.group(0)[:120]}")
        return f"src: url({folder}/{woff2.group(1)}) format('woff2');"

    out, count = re.subn(r"src:[^;]+;", src, css)
    if count == 0:
        raise ValueError("no @font-face src found: is this a @fontsource stylesheet?")

    def face(match: re.Match) -> str:
        block = match.group(0)
        found = re.search(r"unicode-range:\s*([^;]+);", block)
        if found is None:
            return block
        ranges = cjk_only(found.group(1))
        return block.replace(found.group(0), f"unicode-range: {ranges};") if ranges else ""

    faces = re.sub(r"(/\*[^*]*\*/\s*)?@font-face\s*\{[^}]*\}\s*", face, out)
    return re.sub(r"\n{3,}", "\n\n", faces)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.stdout.write(rewrite(Path(sys.argv[1]).read_text()))
